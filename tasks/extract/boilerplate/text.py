"""Per-paragraph text statistics shared by the boilerplate modes.

Words are whitespace tokens with surrounding punctuation stripped (jusText splits at spaces
only; stripping lets ``"the,"`` count as a stop word, which the short hand-written lists
need). Japanese and Chinese have no spaces, so for them:

* *length* stays the number of characters (as in jusText), with CJK thresholds of their own
  (see ``justext``),
* *word units* (for BTE and word counts) are whitespace tokens of non-CJK text plus one unit
  per two CJK characters (typical Japanese / Chinese words are about two characters long),
* *stop-word density* is replaced by the *function-character density*: the share of CJK
  characters (Han + kana) that are grammatical particles / inflection kana (``ja``) or
  function characters (``zh``), from ``stoplists/ja.txt`` / ``zh.txt``.
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

CJK_LANGS = ("ja", "zh")
# Hiragana, katakana, CJK extension A, unified and compatibility ideographs, half-width kana.
_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_CJK_RE = re.compile(f"[{_CJK_CLASS}]")
_KANA_RE = re.compile("[\u3040-\u30ff\uff66-\uff9f]")
_ALNUM_TOKEN = re.compile(r"\S*?[^\W_]\S*")
_LINK_RE = re.compile("\x02([^\x03]*)\x03?")


# A paragraph's start-tag count as the features read it: at most 2**32 (no page has more
# tags; the compiled features hold the count in 64 bits), never below 0.
N_TAGS_MAX = 2 ** 32


def tag_count(n_tags: int) -> int:
    return 0 if n_tags < 0 else min(n_tags, N_TAGS_MAX)


def cjk_count(text: str) -> int:
    return len(_CJK_RE.findall(text))


def link_chars(text: str) -> int:
    """Characters inside link markers (as ``Paragraph.link_chars``, by regex)."""
    if "\x02" not in text:
        return 0
    return sum(len(m) for m in _LINK_RE.findall(text))


@lru_cache(maxsize=None)
def stoplist(lang: str) -> frozenset[str]:
    """Stop words (or, for ja/zh, function characters) of a language; empty if none ships."""
    if not lang or not re.fullmatch(r"[a-z]{2,3}", lang):
        return frozenset()
    try:
        data = resources.files(__package__).joinpath("stoplists", f"{lang}.txt").read_text("utf-8")
    except (FileNotFoundError, OSError):
        return frozenset()
    return frozenset(w.strip().lower() for w in data.splitlines()
                     if w.strip() and not w.startswith("#"))


def available_stoplists() -> list[str]:
    folder = resources.files(__package__).joinpath("stoplists")
    return sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".txt"))


# A word: starts and ends with a letter or digit, may hold ' ’ . - inside ("don't", "e.g").
# Equivalent to splitting at whitespace and stripping the punctuation around each token.
_WORD_TOKEN = re.compile(r"[^\W_](?:[\w'’.-]*[^\W_])?")


def words(text: str) -> list[str]:
    """Lower-cased whitespace tokens, surrounding punctuation stripped, empties dropped."""
    return _WORD_TOKEN.findall(text.lower())


def _is_stop(tok: str, stops: frozenset[str]) -> bool:
    if tok in stops:
        return True
    # Elided articles/pronouns glued to the next word: French l'homme, Italian dell'anno.
    i = tok.find("'")
    if i < 0:
        i = tok.find("’")
    return 0 < i < len(tok) - 1 and tok[:i].replace("’", "'") + "'" in stops


def stopword_density(text: str, lang: str) -> float:
    """Share of words in the stoplist; for ja/zh the function-character density."""
    if lang in CJK_LANGS:
        return function_char_density(text, lang)
    stops = stoplist(lang)
    ws = words(text)
    if not ws or not stops:
        return 0.0
    hits = sum(map(stops.__contains__, ws))
    if "'" in text or "’" in text:   # elided forms only when an apostrophe is there at all
        hits += sum(1 for w in ws if ("'" in w or "’" in w) and w not in stops and _is_stop(w, stops))
    return hits / len(ws)


def function_char_density(text: str, lang: str) -> float:
    chars = stoplist(lang)
    cjk = _CJK_RE.findall(text)
    if not cjk:
        return 0.0
    return sum(1 for ch in cjk if ch in chars) / len(cjk)


@lru_cache(maxsize=65536)
def word_units(text: str) -> int:
    """Word count usable for any script: tokens holding a letter or digit outside CJK, plus
    one unit per two CJK characters."""
    n_cjk = cjk_count(text)
    if n_cjk:
        text = _CJK_RE.sub(" ", text)
    return len(_ALNUM_TOKEN.findall(text)) + (n_cjk + 1) // 2


def guess_language(texts: list[str], sample_chars: int = 20000) -> str:
    """Cheap language guess for choosing a stoplist: kana -> ja, Han without kana -> zh,
    otherwise the shipped stoplist covering most words (``""`` when none covers 10%)."""
    sample = []
    size = 0
    for t in texts:
        sample.append(t)
        size += len(t)
        if size >= sample_chars:
            break
    text = "\n".join(sample)
    n_cjk = cjk_count(text)
    letters = sum(1 for ch in text if ch.isalpha())
    if letters and n_cjk / letters > 0.3:
        kana = len(_KANA_RE.findall(text))
        return "ja" if kana > 0.05 * n_cjk else "zh"
    ws = words(text)
    if not ws:
        return ""
    best, best_share = "", 0.1
    for lang in available_stoplists():
        if lang in CJK_LANGS:
            continue
        stops = stoplist(lang)
        share = sum(1 for w in ws if w in stops) / len(ws)
        if share > best_share:
            best, best_share = lang, share
    return best
