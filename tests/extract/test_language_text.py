"""The language stage's compiled text scans equal their Python references, on the fixed
check texts, on generated ones, and on pages of many scripts and encodings."""
import codecs
import os

import pytest

from conftest import shared_data
from warclake.tasks.extract import language as lang

SCREEN = (lang.SCREEN_MIN_WORDS, lang.SCREEN_MIN_SHARE, lang.SCREEN_MIN_DISTINCT,
          lang.SCREEN_MAX_FOREIGN, lang.SCREEN_MAX_ACCENTED)


def compiled():
    if lang._TEXT is None:
        pytest.skip("compiled language text scans not in use")
    return lang._TEXT


def test_the_compiled_scans_equal_the_references_on_generated_texts():
    compiled()
    from tools.fuzz import language_text as fuzz

    assert fuzz.main(["--cases", "3000", "--seed", "11"]) == 0


@pytest.mark.shared_data("encodings", "chardet", "tests")
def test_the_compiled_scans_equal_the_references_on_pages():
    """Pages in 50 encodings of many scripts, decoded as labelled (Latin, Cyrillic, Greek,
    Hebrew, Arabic, Thai, CJK; with their scripts, styles and comments)."""
    module = compiled()
    root = shared_data("encodings", "chardet", "tests")
    pages = []
    for label in sorted(os.listdir(root)):
        folder = os.path.join(root, label)
        if not os.path.isdir(folder):
            continue
        codec = None
        for name in (label, label.rsplit("-", 1)[0]):   # "iso-8859-2-czech": the code page, then the language
            try:
                codec = codecs.lookup(name)
                break
            except LookupError:
                pass
        if codec is None:
            continue
        for name in sorted(os.listdir(folder))[:6]:
            with open(os.path.join(folder, name), "rb") as f:
                pages.append(f.read().decode(codec.name, "replace"))
    assert len(pages) > 150
    for page in pages:
        for max_chars, window in ((1000, 20480), (200, 3000)):
            assert (module.language_buffer(page, max_chars, window, lang.READ_FACTOR)
                    == lang.reference_language_buffer(page, max_chars, window))
        for text in (page, page[:1000]):
            letters = lang.reference_latin_letters(text)
            assert module.latin_letters(text) == letters
            assert module.english_words_share(text, letters, *SCREEN) == lang.reference_english_words_share(text, letters)


def test_the_screen_passes_and_refuses_as_its_reference():
    module = compiled()
    english = ("The house and the garden that they have with this and which would be there, where the "
               "children are not but the mother could be when some of them were home.")
    german = "Der Hund und die Katze sind nicht im Haus, aber sie werden auch morgen wieder hier sein."
    for text, passes in ((english, True), (german, False), (english + " " + german, False),
                         (english.upper(), True), ("the and " * 3, False)):
        letters = lang.latin_letters(text)
        got = module.english_words_share(text, letters, *SCREEN)
        assert got == lang.reference_english_words_share(text, letters)
        assert (got is not None) == passes, text[:40]
