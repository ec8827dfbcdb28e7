"""The first-pass language identifier: lingua's own trigram models, its compiled pass against
the Python reference, what it settles and what it leaves lingua."""
import pytest

from conftest import shared_data
from tests.extract.test_language import SAMPLES, page
from warclake.tasks.extract import language_first_pass as first_pass
from warclake.tasks.extract import language_models
from warclake.tasks.extract.language import CYRILLIC_LANGS, LATIN_LANGS, LanguageDetector, detect_language


def test_linguas_trigram_models_are_read_from_the_installed_package():
    keys, penalty = language_models.penalty_table(("en", "de"))
    assert penalty.shape == (len(keys), 2) and len(keys) > 10_000
    assert (keys[1:] > keys[:-1]).all()   # sorted, unique
    row = penalty[keys.searchsorted(language_models.trigram_key("the"))]
    assert row[0] < row[1] < language_models.MISSING   # "the": far more English than German
    row = penalty[keys.searchsorted(language_models.trigram_key("sch"))]
    assert row[1] < row[0]


@pytest.mark.parametrize("lang", ["de", "fr", "es", "hu", "ru", "uk", "bg"])
def test_it_settles_clear_text_as_lingua_does(lang):
    langs = CYRILLIC_LANGS if lang in CYRILLIC_LANGS else LATIN_LANGS
    got = first_pass.settle(SAMPLES[lang], langs)
    assert got is not None and got[0] == lang and 0.5 < got[1] <= 1.0
    assert detect_language(page(SAMPLES[lang]), ("all",), first_pass=False).lang == lang


@pytest.mark.parametrize("text", [
    "Hello world",                                   # short: too few trigrams
    "Das Wetter war heute schön, the weather was fine today, el tiempo era bueno hoy",   # mixed
    "Bosnia Bulgaria Croatia Czech Republic Estonia Hungary",   # names only
])
def test_short_and_mixed_text_is_left_to_lingua(text):
    assert first_pass.settle(text, LATIN_LANGS) is None
    assert detect_language(page(text), ("all",), screen=False).via == "lingua"


def test_scripts_other_than_latin_and_cyrillic_are_not_its_to_judge():
    assert first_pass.settle(SAMPLES["ar"], ("ar", "fa", "ur")) is None


def test_the_compiled_pass_equals_the_reference():
    from tools.fuzz import language_first_pass as fuzz

    t = first_pass.table()
    if t.module is None:
        pytest.skip(f"compiled first pass not in use ({t.reason})")
    for text in list(SAMPLES.values()) + list(first_pass.CHECK_TEXTS):
        assert tuple(t.module.scores(text)) == first_pass.reference_scores(text, t)
    assert fuzz.main(["--cases", "300", "--seed", "7"]) == 0


def test_unreadable_models_leave_every_text_to_lingua(monkeypatch, capsys):
    def broken():
        raise FileNotFoundError("no lingua extension module")

    monkeypatch.setattr(language_models, "_extension_path", broken)
    monkeypatch.setattr(first_pass, "_TABLE", None)
    monkeypatch.setattr(first_pass, "_FAILED", None)
    res = LanguageDetector(("all",), screen=False).detect(page(SAMPLES["de"]))
    assert (res.lang, res.via) == ("de", "lingua")
    assert "first-pass language identifier off" in capsys.readouterr().err


def test_it_reads_the_text_as_lingua_is_asked():
    # English in the first 200 characters settles on them, as lingua's first look does
    english = SAMPLES["en"][:200]
    german = "Die Bibliothek öffnet um neun Uhr morgens und schließt erst spät am Abend. " * 10
    got = first_pass.settle(english + german, LATIN_LANGS, first_look=200)
    assert got is not None and got[0] == "en"
    assert first_pass.settle(english + german, LATIN_LANGS)[0] == "de"


@pytest.mark.shared_data("encodings", "chardet")
def test_held_back_labelled_pages_and_sentences_keep_linguas_accuracy():
    from tools.measure.language import load_pages, run, sentences
    from warclake.tasks.evaluation.gold import split_of

    pages = [p for p in load_pages(shared_data(), english=100) if split_of(f"{p.source}/{p.name}") == "heldout"]
    items = pages + sentences(pages)
    on = run(items, ("all",), paragraphs=True)
    off = run(items, ("all",), paragraphs=True, first_pass=False)
    assert len(items) >= 150 and on["via"].get("trigrams", 0) >= 0.3 * len(items)   # measured 109 of 257
    assert on["lang_accuracy"] >= off["lang_accuracy"], (on["wrong"], off["wrong"])


def test_the_table_is_cached_and_a_damaged_cache_is_rebuilt(monkeypatch, tmp_path):
    from warclake.tasks.extract import trigram_cache

    monkeypatch.setenv("WARCLAKE_CACHE_DIR", str(tmp_path))
    langs = ("en", "de", "fr")
    built = language_models.build_penalty_table(langs)
    keys, penalty = language_models.penalty_table(langs)   # builds and stores
    (path,) = tmp_path.glob("trigrams-*.bin")
    assert (keys == built[0]).all() and (penalty == built[1]).all()
    whole = path.read_bytes()
    assert trigram_cache.load(path, len(langs)) is not None

    def rebuilt_from(damaged: bytes) -> None:
        path.write_bytes(damaged)
        assert trigram_cache.load(path, len(langs)) is None
        keys, penalty = language_models.penalty_table(langs)
        assert (keys == built[0]).all() and (penalty == built[1]).all()
        assert path.read_bytes() == whole   # written again, whole

    rebuilt_from(whole[:len(whole) // 2])                        # half-written
    rebuilt_from(whole[:-1] + bytes([whole[-1] ^ 1]))            # one bit flipped
    rebuilt_from(b"")                                            # empty
    rebuilt_from(b"X" + whole[1:])                               # another format
    assert trigram_cache.load(path, 2) is None                   # other languages: other shape
    assert not list(tmp_path.glob("*.part"))                     # no leftovers


def test_an_unwritable_cache_only_costs_the_build(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("WARCLAKE_CACHE_DIR", str(blocker / "cache"))
    keys, penalty = language_models.penalty_table(("en", "de"))
    assert penalty.shape == (len(keys), 2) and len(keys) > 10_000
