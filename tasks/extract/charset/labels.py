"""Charset labels: the WHATWG label table, label -> canonical name, and name -> Python codec.

Names are WHATWG Encoding Standard names, lower-case, with one exception kept from Uzushio:
Shift_JIS and its labels are decoded as windows-31j (cp932) and reported so.
"""
from __future__ import annotations

import codecs

# Encoding names and their labels as listed by the WHATWG Encoding Standard, with the Python
# codec that decodes each. Where WHATWG's decoder is a superset of the historical charset the
# superset codec is used (GBK -> gb18030, Big5 -> big5hkscs, EUC-KR -> cp949 (UHC)).
_WHATWG: dict[str, tuple[str, str]] = {
    # name: (python codec, space-separated labels)
    "utf-8": ("utf-8", "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"),
    "ibm866": ("cp866", "866 cp866 csibm866 ibm866"),
    "iso-8859-2": ("iso8859_2", "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 "
                                "iso_8859-2:1987 l2 latin2"),
    "iso-8859-3": ("iso8859_3", "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 "
                                "iso_8859-3:1988 l3 latin3"),
    "iso-8859-4": ("iso8859_4", "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 "
                                "iso_8859-4:1988 l4 latin4"),
    "iso-8859-5": ("iso8859_5", "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 "
                                "iso_8859-5 iso_8859-5:1988"),
    "iso-8859-6": ("iso8859_6", "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 "
                                "iso-8859-6 iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 "
                                "iso_8859-6 iso_8859-6:1987"),
    "iso-8859-7": ("iso8859_7", "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 "
                                "iso8859-7 iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek"),
    "iso-8859-8": ("iso8859_8", "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 "
                                "iso8859-8 iso88598 iso_8859-8 iso_8859-8:1988 visual"),
    "iso-8859-8-i": ("iso8859_8", "csiso88598i iso-8859-8-i logical"),
    "iso-8859-10": ("iso8859_10", "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6"),
    "iso-8859-13": ("iso8859_13", "iso-8859-13 iso8859-13 iso885913"),
    "iso-8859-14": ("iso8859_14", "iso-8859-14 iso8859-14 iso885914"),
    "iso-8859-15": ("iso8859_15", "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9"),
    "iso-8859-16": ("iso8859_16", "iso-8859-16"),
    "koi8-r": ("koi8_r", "cskoi8r koi koi8 koi8-r koi8_r"),
    "koi8-u": ("koi8_u", "koi8-ru koi8-u"),
    "macintosh": ("mac_roman", "csmacintosh mac macintosh x-mac-roman"),
    "windows-874": ("cp874", "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874"),
    "windows-1250": ("cp1250", "cp1250 windows-1250 x-cp1250"),
    "windows-1251": ("cp1251", "cp1251 windows-1251 x-cp1251"),
    "windows-1252": ("windows-1252", "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 "
                                     "iso-ir-100 iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 "
                                     "us-ascii windows-1252 x-cp1252"),
    "windows-1253": ("cp1253", "cp1253 windows-1253 x-cp1253"),
    "windows-1254": ("cp1254", "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 "
                               "iso_8859-9:1989 l5 latin5 windows-1254 x-cp1254"),
    "windows-1255": ("cp1255", "cp1255 windows-1255 x-cp1255"),
    "windows-1256": ("cp1256", "cp1256 windows-1256 x-cp1256"),
    "windows-1257": ("cp1257", "cp1257 windows-1257 x-cp1257"),
    "windows-1258": ("cp1258", "cp1258 windows-1258 x-cp1258"),
    "x-mac-cyrillic": ("mac_cyrillic", "x-mac-cyrillic x-mac-ukrainian"),
    "gbk": ("gb18030", "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk"),
    "gb18030": ("gb18030", "gb18030"),
    "big5": ("big5hkscs", "big5 big5-hkscs cn-big5 csbig5 x-x-big5"),
    "euc-jp": ("euc_jp", "cseucpkdfmtjapanese euc-jp x-euc-jp"),
    "iso-2022-jp": ("iso2022_jp_ext", "csiso2022jp iso-2022-jp"),
    # WHATWG calls it Shift_JIS; Uzushio reports the Microsoft variant it really decodes with.
    "windows-31j": ("cp932", "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis"),
    "euc-kr": ("cp949", "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 "
                        "ksc5601 ksc_5601 windows-949"),
    "utf-16be": ("utf-16-be", "unicodefffe utf-16be"),
    "utf-16le": ("utf-16-le", "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le"),
    # WHATWG decodes x-user-defined to private-use code points; the prescan maps it to
    # windows-1252 and so do we everywhere (it is never meant as a real charset on the web).
    "windows-1252#x-user-defined": ("windows-1252", "x-user-defined"),
}
# Not WHATWG encodings, but real and decodable by Python: kept so such pages are not lost.
_EXTRA: dict[str, tuple[str, str]] = {
    "utf-32le": ("utf-32-le", "utf-32le utf-32 ucs-4 ucs-4le"),
    "utf-32be": ("utf-32-be", "utf-32be ucs-4be"),
    "euc-kr#cp949": ("cp949", "cp949 uhc ks_c_5601"),
    "iso-2022-kr": ("iso2022_kr", "iso-2022-kr csiso2022kr"),
    "johab": ("johab", "johab"),
    "ibm855": ("cp855", "ibm855 cp855 855"),
}

_LABELS: dict[str, str] = {}   # label -> canonical name
CODEC: dict[str, str] = {}     # canonical name -> python codec
for _table in (_WHATWG, _EXTRA):
    for _key, (_py, _labels) in _table.items():
        _name = _key.split("#")[0]
        CODEC.setdefault(_name, _py)
        for _label in _labels.split():
            _LABELS.setdefault(_label, _name)

# Spellings that other tools write (Python codec names, IANA and Microsoft names) but that
# are not WHATWG labels: the decoder ignores them, as browsers do, while the lake's SQL
# macro charset_label() (built from report_labels()) counts them with the encoding they mean.
_FOREIGN: dict[str, str] = {
    # name: space-separated spellings
    "windows-31j": "cp932 cswindows31j windows-932 x-ms-cp932",
    "euc-jp": "euc_jp eucjp ujis",
    "iso-2022-jp": "iso2022_jp",
    "gbk": "cp936 ms936 windows-936",
    "big5": "cp950",
    "euc-kr": "euc_kr",
    "utf-16le": "utf_16le utf16le",
    "utf-16be": "utf_16be utf16be",
    "utf-32le": "utf_32le utf32le",
}

# charset-normalizer answers with Python codec names; map Python's canonical codec names to
# ours (identity through the tables above, plus the names the tables do not spell).
_PY_TO_NAME: dict[str, str] = {}
for _name, _py in CODEC.items():
    _PY_TO_NAME.setdefault(codecs.lookup(_py).name, _name)
for _py, _name in {
    "shift_jis": "windows-31j", "cp932": "windows-31j", "shift_jis_2004": "windows-31j",
    "shift_jisx0213": "windows-31j", "euc_jis_2004": "euc-jp", "euc_jisx0213": "euc-jp",
    "latin-1": "windows-1252", "ascii": "windows-1252", "cp1252": "windows-1252",
    "gb2312": "gbk", "gbk": "gbk", "big5": "big5", "cp950": "big5", "euc_kr": "euc-kr",
    "iso2022_jp": "iso-2022-jp", "iso2022_jp_2": "iso-2022-jp", "tis-620": "windows-874",
    "iso8859-9": "windows-1254", "iso8859-11": "windows-874", "utf-8-sig": "utf-8",
    "cp1125": "ibm866",  # the Ukrainian cp866; they differ in 8 rarely used cells
}.items():
    _PY_TO_NAME[codecs.lookup(_py).name] = _name


def normalize_label(label: str | bytes | None) -> str | None:
    """Canonical lower-case name for a charset label (WHATWG "get an encoding"), or None."""
    if label is None:
        return None
    if isinstance(label, bytes):
        label = label.decode("latin-1")
    return _LABELS.get(label.strip("\t\n\f\r ").lower())


def python_codec_name(py_name: str) -> str | None:
    """Our name for a Python codec name (as charset-normalizer returns), or None if unknown."""
    try:
        info = codecs.lookup(py_name)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True):
        return None
    return _PY_TO_NAME.get(info.name) or normalize_label(py_name.replace("_", "-"))


def report_labels() -> dict[str, str]:
    """Every spelling the lake's reports map to a canonical name: the labels
    ``normalize_label`` knows, plus the foreign spellings above (never overriding a label)."""
    out = dict(_LABELS)
    for name, spellings in _FOREIGN.items():
        for spelling in spellings.split():
            out.setdefault(spelling, name)
    return out
