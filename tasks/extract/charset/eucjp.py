"""EUC-JP as WHATWG decodes it: codec error handlers that fill the cells Python's euc_jp lacks.

Registered on import; ``ERROR_HANDLERS`` names the (strict, lenient) pair to use per Python
codec in place of "strict" and "replace".
"""
from __future__ import annotations

import codecs


def _eucjp_extension(err: UnicodeDecodeError) -> tuple[str, int] | None:
    """NEC row 13 (circled digits...) and NEC-selected IBM rows 89-92 in EUC-JP, which WHATWG's
    jis0208 index has and Python's euc_jp lacks: decode the same JIS cell through cp932."""
    data, i = err.object, err.start
    if i + 1 >= len(data):
        return None
    a, b = data[i], data[i + 1]
    if not (0xA1 <= a <= 0xFE and 0xA1 <= b <= 0xFE):
        return None
    row, cell = a - 0xA0, b - 0xA0
    lead = (row + 1) // 2 + (0x80 if row <= 62 else 0xC0)
    if row % 2:
        trail = cell + 0x3F + (cell >= 64)
    else:
        trail = cell + 0x9E
    try:
        return bytes([lead, trail]).decode("cp932"), i + 2
    except UnicodeDecodeError:
        return None


def _eucjp_strict(err):
    got = _eucjp_extension(err)
    if got is None:
        raise err
    return got


def _eucjp_replace(err):
    return _eucjp_extension(err) or ("\ufffd", err.start + 1)


codecs.register_error("warclake-eucjp-strict", _eucjp_strict)
codecs.register_error("warclake-eucjp-replace", _eucjp_replace)
ERROR_HANDLERS = {"euc_jp": ("warclake-eucjp-strict", "warclake-eucjp-replace")}
