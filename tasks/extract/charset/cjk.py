"""Choosing among the CJK multibyte encodings by strict validity and character frequency.

charset-normalizer returns nothing on some Japanese and Korean pages (so the page was left
undecoded) and ranks EUC-JP below GBK when both decode. The encodings themselves separate
common from rare characters: each standard's first level holds the characters in everyday use
(GB2312 level 1: the 3,755 most frequent simplified hanzi; Big5 level 1: the 5,401 frequent
traditional ones; JIS X 0208 level 1: 2,965 everyday kanji). A right decoding reads as kana,
Hangul and first-level Han of the language the text is in; a wrong one lands on rare Han,
half-width katakana, private-use and other symbols.
"""
from __future__ import annotations

from functools import lru_cache

# Order breaks ties: text without kana or Hangul is Chinese (a Japanese page always writes kana).
CANDIDATES = ("gbk", "big5", "windows-31j", "euc-jp", "euc-kr")
MIN_KANA = 4  # as in language.py: fewer kana say nothing
PHONETIC_BONUS = 0.01


def _rows(codec: str, leads: range, trails: list[int]) -> frozenset:
    out = set()
    for lead in leads:
        for trail in trails:
            ch = bytes([lead, trail]).decode(codec, "ignore")
            if len(ch) == 1:
                out.add(ch)
    return frozenset(out)


@lru_cache(maxsize=1)
def _levels() -> tuple[frozenset, frozenset]:
    """(JIS level 1, GB2312 level 1 | Big5 level 1)."""
    euc = list(range(0xA1, 0xFF))
    jis = _rows("euc_jp", range(0xB0, 0xD0), euc)
    chinese = _rows("gb2312", range(0xB0, 0xD8), euc) | _rows(
        "big5", range(0xA4, 0xC7), list(range(0x40, 0x7F)) + euc)
    return jis, chinese


def score_text(text: str) -> float:
    """Share of the non-ASCII characters that are everyday characters of the text's language."""
    jis, chinese = _levels()
    kana = hangul = han = han_ja = han_zh = other = 0
    for c in text:
        if c < "\x80" or c.isspace():
            continue
        if "\u3040" <= c <= "\u30ff":
            kana += 1
        elif "\uac00" <= c <= "\ud7a3" or "\u3131" <= c <= "\u318e":  # syllables, compatibility jamo
            hangul += 1
        elif "\u4e00" <= c <= "\u9fff":
            # Every Han character counts once; the first-level ones are the good ones.
            han += 1
            han_ja += c in jis
            han_zh += c in chinese
        elif "\u3000" <= c <= "\u303f" or "\uff01" <= c <= "\uff5e" or "\u2000" <= c <= "\u27ff":
            pass  # punctuation, full-width forms, arrows, shapes: every standard has them
        else:
            other += 1
    total = kana + hangul + han + other
    if not total:
        return 0.0
    # A phonetic script read at full share is the stronger sign: it breaks ties with Han.
    if kana >= MIN_KANA:
        good, bonus = kana + han_ja, PHONETIC_BONUS
    elif hangul >= MIN_KANA:
        good, bonus = hangul + max(han_ja, han_zh), PHONETIC_BONUS
    else:
        good, bonus = han_zh, 0.0
    return (good - other) / total + bonus
