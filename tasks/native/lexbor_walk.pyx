# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The paragraph walk of ``warclake.tasks.extract.html_paragraphs`` over lexbor's own node structs.

It walks the tree selectolax already built (reached through ``LexborNode.mem_id``) and
gives exactly the Python walk's ``(path, text, n_tags)``: the same loop, the run buffer as
UTF-8 bytes, the text normalisation step by step in C, and the Python helpers for path
segments (per ancestor of a paragraph, not per node). Anything it cannot read with certainty (a static tag id it
has no name for, an attribute whose written name differs from its id) makes ``walk``
return None, and the caller runs the Python walk on that page.
"""
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_AsUTF8String, PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    const char *PyUnicode_AsUTF8AndSize(object o, Py_ssize_t *size) except NULL

include "lexbor_layout.pxi"

# html_paragraphs.MAX_SEGMENT_CHARS (the import-time check compares them)
cdef enum:
    MAX_SEGMENT = 256
MAX_SEGMENT_CHARS = MAX_SEGMENT

# Kinds of element on the stack (bit flags, as in the Python walk).
cdef enum:
    K_BLOCK = 1
    K_LINK = 2
    K_PRE = 4
    K_CACHED = 8
    K_ROW = 16
    K_CELL = 32

# Dispatch codes (the values of html_paragraphs._CODES).
cdef enum:
    C_INLINE = 0
    C_BLOCK = 1
    C_PRE = 2
    C_DROP = 3
    C_A = 4
    C_BR = 5
    C_VOID = 6
    C_HR = 7
    C_NOSCRIPT = 8
    C_TABLE = 9
    C_TR = 10
    C_CELL = 11

cdef unsigned char CODES[STATIC_ID_LIMIT]
cdef uintptr_t TEXT_ID = 0, COMMENT_ID = 0, ATTR_CLASS = 0, ATTR_ID = 0, ATTR_HREF = 0
cdef int MAX_PATH = 100, PATH_HEAD = 50, PATH_TAIL = 50
cdef Py_ssize_t MAX_CELL_CHARS = 1000, MIN_ROW_CELLS = 2
cdef str ROW_SEP = " | "
cdef dict TAG_NAMES = {}          # static tag id -> clean name
cdef object SEGMENT = None        # html_paragraphs._segment_of(name, cls, ident)
cdef object RAW_NAME = None       # html_paragraphs._tag_name_of(raw)
cdef object PARAGRAPH = None
cdef object TOO_MANY = None


class Unsupported(Exception):
    """The page holds something this walk does not read; the Python walk takes it."""


def configure(dict codes, dict names, uintptr_t text_id, uintptr_t comment_id,
              uintptr_t attr_class, uintptr_t attr_id, uintptr_t attr_href,
              segment, raw_name, paragraph, too_many,
              int max_path, int path_head, int path_tail):
    """Tables and helpers from html_paragraphs (one source of truth for both walks)."""
    global TEXT_ID, COMMENT_ID, ATTR_CLASS, ATTR_ID, ATTR_HREF, TAG_NAMES
    global SEGMENT, RAW_NAME, PARAGRAPH, TOO_MANY, MAX_PATH, PATH_HEAD, PATH_TAIL
    cdef Py_ssize_t i
    for i in range(STATIC_ID_LIMIT):
        CODES[i] = C_INLINE
    for tid, code in codes.items():
        if tid >= STATIC_ID_LIMIT:
            raise ValueError("a tag of the dispatch table has no static lexbor id")
        CODES[<Py_ssize_t> tid] = <unsigned char> code
    TAG_NAMES = dict(names)
    TEXT_ID, COMMENT_ID = text_id, comment_id
    ATTR_CLASS, ATTR_ID, ATTR_HREF = attr_class, attr_id, attr_href
    SEGMENT, RAW_NAME = segment, raw_name
    PARAGRAPH, TOO_MANY = paragraph, too_many
    MAX_PATH, PATH_HEAD, PATH_TAIL = max_path, path_head, path_tail
    rows = segment.__globals__   # html_paragraphs, whose _segment_of this is: its row settings
    configure_rows(rows["ROW_SEP"], rows["MAX_CELL_CHARS"], rows["MIN_ROW_CELLS"])


def configure_rows(str row_sep, Py_ssize_t max_cell_chars, Py_ssize_t min_row_cells):
    """html_paragraphs' data-row settings (ROW_SEP, MAX_CELL_CHARS, MIN_ROW_CELLS)."""
    global ROW_SEP, MAX_CELL_CHARS, MIN_ROW_CELLS
    ROW_SEP, MAX_CELL_CHARS, MIN_ROW_CELLS = row_sep, max_cell_chars, min_row_cells


# ---- UTF-8 checks: the Python walk works on str, this one on lexbor's bytes ----

cdef inline bint _valid_utf8(const unsigned char *s, size_t n) noexcept nogil:
    """True when s is what Python's strict UTF-8 decoder accepts."""
    cdef size_t i = 0
    cdef unsigned char c, c1
    while i < n:
        c = s[i]
        if c < 0x80:
            i += 1
            continue
        if c < 0xC2 or c > 0xF4:
            return False
        if c < 0xE0:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return False
            i += 2
            continue
        if i + 1 >= n:
            return False
        c1 = s[i + 1]
        if c < 0xF0:
            if (c1 & 0xC0) != 0x80 or (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 > 0x9F):
                return False
            if i + 2 >= n or (s[i + 2] & 0xC0) != 0x80:
                return False
            i += 3
            continue
        if (c1 & 0xC0) != 0x80 or (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 > 0x8F):
            return False
        if i + 3 >= n or (s[i + 2] & 0xC0) != 0x80 or (s[i + 3] & 0xC0) != 0x80:
            return False
        i += 4
    return True


cdef inline bint _all_space(const unsigned char *s, size_t n) noexcept nogil:
    """str.isspace() of valid-or-not UTF-8 (invalid bytes decode to U+FFFD: not space)."""
    cdef size_t i = 0
    cdef unsigned char c, c1, c2
    if n == 0:
        return False
    while i < n:
        c = s[i]
        if c == 0x20 or (0x09 <= c <= 0x0D) or (0x1C <= c <= 0x1F):
            i += 1
        elif c == 0xC2:
            if i + 1 >= n or (s[i + 1] != 0x85 and s[i + 1] != 0xA0):
                return False
            i += 2
        elif c == 0xE1 or c == 0xE2 or c == 0xE3:
            if i + 2 >= n:
                return False
            c1, c2 = s[i + 1], s[i + 2]
            if c == 0xE1:
                if not (c1 == 0x9A and c2 == 0x80):        # U+1680
                    return False
            elif c == 0xE3:
                if not (c1 == 0x80 and c2 == 0x80):        # U+3000
                    return False
            elif c1 == 0x80:
                # U+2000..U+200A, U+2028, U+2029, U+202F
                if not ((0x80 <= c2 <= 0x8A) or c2 == 0xA8 or c2 == 0xA9 or c2 == 0xAF):
                    return False
            elif not (c1 == 0x81 and c2 == 0x9F):          # U+205F
                return False
            i += 3
        else:
            return False
    return True


def whitespace_table(int below):
    """The code points under ``below`` that _all_space accepts (the self-check compares
    them with str.isspace; every Unicode space is below U+3001)."""
    cdef list out = []
    cdef bytes b
    for cp in range(below):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        b = chr(cp).encode("utf-8")
        if _all_space(<const unsigned char *> PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b)):
            out.append(cp)
    return out


# ---- text normalisation: html_paragraphs._normalise step by step, on UTF-8 bytes ----
# Every pattern it replaces is ASCII, so byte-level replacement equals str.replace.

cdef inline size_t _space_len(const unsigned char *s, size_t i, size_t n) noexcept nogil:
    """Length of the Unicode whitespace character at s[i] (0: not whitespace)."""
    cdef unsigned char c = s[i]
    if c < 0x80:
        return 1 if (c == 32 or 9 <= c <= 13 or 28 <= c <= 31) else 0
    if c == 0xC2:
        return 2 if (i + 1 < n and _all_space(s + i, 2)) else 0
    if 0xE1 <= c <= 0xE3:
        return 3 if (i + 2 < n and _all_space(s + i, 3)) else 0
    return 0


cdef size_t _replace(const unsigned char *src, size_t n, const char *old, size_t n_old,
                     const char *new, size_t n_new, unsigned char *dst) noexcept nogil:
    """str.replace (left to right, non-overlapping) into dst (room for the result)."""
    cdef size_t i = 0, j = 0, k, start
    cdef unsigned char first = <unsigned char> old[0]
    cdef const unsigned char *hit
    while i < n:
        hit = <const unsigned char *> memchr(src + i, first, n - i)
        if hit == NULL:
            memcpy(dst + j, src + i, n - i)
            return j + n - i
        start = hit - src
        memcpy(dst + j, src + i, start - i)
        j += start - i
        i = start
        if i + n_old <= n:
            k = 1
            while k < n_old and src[i + k] == <unsigned char> old[k]:
                k += 1
            if k == n_old:
                for k in range(n_new):
                    dst[j + k] = <unsigned char> new[k]
                j += n_new
                i += n_old
                continue
        dst[j] = src[i]
        j += 1
        i += 1
    return j


cdef bint _has(const unsigned char *s, size_t n, const char *pat) noexcept nogil:
    cdef size_t i
    for i in range(n - 1 if n else 0):
        if s[i] == <unsigned char> pat[0] and s[i + 1] == <unsigned char> pat[1]:
            return True
    return False


cdef bint _has_byte(const unsigned char *s, size_t n, unsigned char c) noexcept nogil:
    cdef size_t i
    for i in range(n):
        if s[i] == c:
            return True
    return False


cdef inline bint _pre_space(unsigned char c) noexcept nogil:
    return c == 4 or c == 5 or c == 32 or c == 10


cdef size_t _pre_link_spacing(unsigned char *a, size_t n, unsigned char *b) noexcept nogil:
    """Spacing just inside a link moved out of it (a run after \\x02 before it, a run
    before \\x03 after it), then empty links removed; left in a, its length."""
    cdef size_t i = 0, j = 0, w
    while i < n:  # "\x02" + run -> run + "\x02"
        if a[i] == 2:
            w = i + 1
            while w < n and _pre_space(a[w]):
                w += 1
            memcpy(b + j, a + i + 1, w - i - 1)
            j += w - i - 1
            b[j] = 2
            j += 1
            i = w
        else:
            b[j] = a[i]
            j += 1
            i += 1
    n = j
    i = j = 0
    while i < n:  # run + "\x03" -> "\x03" + run
        if _pre_space(b[i]):
            w = i
            while w < n and _pre_space(b[w]):
                w += 1
            if w < n and b[w] == 3:
                a[j] = 3
                j += 1
                memcpy(a + j, b + i, w - i)
                j += w - i
                i = w + 1
            else:
                memcpy(a + j, b + i, w - i)
                j += w - i
                i = w
        else:
            a[j] = b[i]
            j += 1
            i += 1
    n = _replace(a, j, "\x02\x03", 2, "", 0, b)
    memcpy(a, b, n)
    return n


cdef size_t _pre_lines(unsigned char *a, size_t n, unsigned char *b) noexcept nogil:
    """A pre-like block's run: each line without its trailing spaces and tabs (kept or
    not), empty lines dropped, kept spaces and tabs written back; left in a, its length."""
    cdef size_t i = 0, j = 0, start, end, k
    cdef unsigned char c
    if _has_byte(a, n, 2):
        n = _pre_link_spacing(a, n, b)
    while i <= n:
        start = i
        while i < n and a[i] != 10:
            i += 1
        end = i
        while end > start and (a[end - 1] == 32 or a[end - 1] == 4 or a[end - 1] == 5):
            end -= 1
        if end > start:
            if j:
                b[j] = 10
                j += 1
            for k in range(start, end):
                c = a[k]
                b[j] = 32 if c == 4 else 9 if c == 5 else c
                j += 1
        i += 1
    memcpy(a, b, j)
    return j


cdef size_t _normalise_bytes(unsigned char *a, size_t n, unsigned char *b) noexcept nogil:
    """The normalised text of a[:n], left in a (b: scratch of the same size); its length."""
    cdef size_t i = 0, j = 0, w, n0
    cdef bint pending = False
    cdef unsigned char c
    cdef bint run_nl
    cdef unsigned int marks = 0     # bit c: the control byte c (1-31, not whitespace) is kept
    # " ".join(raw.split())
    while i < n:
        c = a[i]
        if c > 32 and c < 0x80:
            if pending:
                a[j] = 32
                j += 1
                pending = False
            a[j] = c
            j += 1
            i += 1
            while i < n and a[i] > 32 and a[i] < 0x80:   # the rest of a run of visible ASCII
                a[j] = a[i]
                j += 1
                i += 1
            continue
        w = _space_len(a, i, n)
        if w:
            pending = j > 0
            i += w
            continue
        if pending:
            a[j] = 32
            j += 1
            pending = False
        if c < 32:
            marks |= (<unsigned int> 1) << c
        a[j] = c
        j += 1
        i += 1
    n = j
    # (no step below adds or removes a byte 1, 2, 4 or 5 but the one that handles it)
    if marks & (1 << 1):
        n = _replace(a, n, " \x01", 2, "\x01", 1, b)
        n = _replace(b, n, "\x01 ", 2, "\x01", 1, a)
        if _has(a, n, "\x01\x01"):
            j = 0
            for i in range(n):
                if a[i] == 1 and j > 0 and a[j - 1] == 1:
                    continue
                a[j] = a[i]
                j += 1
            n = j
        for i in range(n):
            if a[i] == 1:
                a[i] = 10
    if marks & (1 << 2):
        n0 = n
        n = _replace(a, n, "\x02\x03", 2, "", 0, b)
        n = _replace(b, n, "\x02 \x03", 3, " ", 1, a)
        n = _replace(a, n, "\x02\n\x03", 3, "\n", 1, b)
        memcpy(a, b, n)
        if (_has(a, n, "\x02 ") or _has(a, n, "\x02\n") or _has(a, n, " \x03")
                or _has(a, n, "\n\x03")):
            n = _replace(a, n, "\x02 ", 2, " \x02", 2, b)
            n = _replace(b, n, "\x02\n", 2, "\n\x02", 2, a)
            n = _replace(a, n, " \x03", 2, "\x03 ", 2, b)
            n = _replace(b, n, "\n\x03", 2, "\x03\n", 2, a)
            n0 = n + 1
        if n != n0:
            # runs of two or more of " " and "\n" become "\n" if they hold one, else " "
            i = j = 0
            while i < n:
                c = a[i]
                if c == 32 or c == 10:
                    w = i
                    run_nl = False
                    while w < n and (a[w] == 32 or a[w] == 10):
                        if a[w] == 10:
                            run_nl = True
                        w += 1
                    if w - i >= 2:
                        a[j] = 10 if run_nl else 32
                        j += 1
                    else:
                        a[j] = c
                        j += 1
                    i = w
                    continue
                a[j] = c
                j += 1
                i += 1
            n = j
    # strip(" \n")
    i = 0
    while i < n and (a[i] == 32 or a[i] == 10):
        i += 1
    while n > i and (a[n - 1] == 32 or a[n - 1] == 10):
        n -= 1
    if i:
        memcpy(b, a + i, n - i)
        memcpy(a, b, n - i)
        n -= i
    if marks & ((1 << 4) | (1 << 5)):
        n = _pre_lines(a, n, b)
    # a paragraph of only zero-width characters, spaces and markers is empty
    i = 0
    while i < n:
        c = a[i]
        if c == 32 or c == 10 or c == 2 or c == 3:
            i += 1
        elif (c == 0xE2 and i + 2 < n and a[i + 1] == 0x80 and 0x8B <= a[i + 2] <= 0x8D):
            i += 3
        elif (c == 0xE2 and i + 2 < n and a[i + 1] == 0x81 and a[i + 2] == 0xA0):
            i += 3
        elif (c == 0xEF and i + 2 < n and a[i + 1] == 0xBB and a[i + 2] == 0xBF):
            i += 3
        else:
            return n
    return 0


def normalise(str raw):
    """html_paragraphs._normalise computed by _normalise_bytes (for the tests)."""
    cdef bytes data = raw.encode("utf-8")
    cdef size_t n = len(data)
    cdef unsigned char *a = <unsigned char *> malloc(n + 1)
    cdef unsigned char *b = <unsigned char *> malloc(n + 1)
    try:
        memcpy(a, <const unsigned char *> PyBytes_AS_STRING(data), n)
        n = _normalise_bytes(a, n, b)
        return PyUnicode_DecodeUTF8(<char *> a, n, NULL)
    finally:
        free(a)
        free(b)


# ---- the run buffer ----

cdef struct Buf:
    unsigned char *data
    unsigned char *scratch  # as large as data, for _normalise_bytes
    size_t len
    size_t cap
    Py_ssize_t items        # len() of the Python walk's list of pieces


cdef int _reserve(Buf *b, size_t extra) except -1:
    cdef size_t cap
    cdef unsigned char *p
    if b.len + extra <= b.cap:
        return 0
    cap = b.cap * 2 if b.cap else 256
    while cap < b.len + extra:
        cap *= 2
    p = <unsigned char *> realloc(b.data, cap)
    if p == NULL:
        raise MemoryError()
    b.data = p
    p = <unsigned char *> realloc(b.scratch, cap)
    if p == NULL:
        raise MemoryError()
    b.scratch, b.cap = p, cap
    return 0


cdef inline int _put(Buf *b, unsigned char c) except -1:
    if b.len == b.cap:
        _reserve(b, 1)
    b.data[b.len] = c
    b.len += 1
    b.items += 1
    return 0


cdef int _put_text(Buf *b, const unsigned char *s, size_t n, bint dirty, bint pre) except -1:
    """Appends a text node's bytes: markers removed when the page carries them, newlines,
    spaces and tabs of pre-like blocks turned into their sentinels."""
    cdef size_t i
    cdef unsigned char c
    cdef unsigned char *out
    _reserve(b, n)
    out = b.data + b.len
    if not dirty and not pre:
        memcpy(out, s, n)
        b.len += n
    else:
        for i in range(n):
            c = s[i]
            if dirty and 1 <= c <= 5:
                continue
            if pre:  # html_paragraphs' _BR, _SP and _TAB
                if c == 10:
                    c = 1
                elif c == 32:
                    c = 4
                elif c == 9:
                    c = 5
            out[0] = c
            out += 1
        b.len = out - b.data
    b.items += 1
    return 0


cdef object _take(Buf *b, int in_link):
    """The normalised text of the finished run (an open link closed in it); resets it."""
    cdef object text = ""
    cdef size_t n
    if not (in_link and b.items == 1):
        if in_link:
            _put(b, 3)
        n = _normalise_bytes(b.data, b.len, b.scratch)
        if n:
            text = PyUnicode_DecodeUTF8(<char *> b.data, n, NULL)
    b.len = 0
    b.items = 0
    if in_link:
        _put(b, 2)
    return text


# ---- path segments ----

cdef object _lx_name(uintptr_t tid):
    """The name lexbor stores for a per-document tag id (the address of its entry)."""
    cdef lx_tag_data *data = <lx_tag_data *> tid
    if data.tag_id != tid:
        raise Unsupported("tag entry")
    if data.length <= 16:
        return PyUnicode_DecodeUTF8(<char *> data.u.short_str, data.length, "replace")
    return PyUnicode_DecodeUTF8(<char *> data.u.long_str, data.length, "replace")


cdef object _attr_value(lx_attr *attr):
    if attr.value == NULL or attr.value.data == NULL:
        return None
    return PyUnicode_DecodeUTF8(<char *> attr.value.data, attr.value.length, "replace")


# Bytes _clean deletes from names, classes and ids (html_paragraphs._PATH_BAD), and the
# ASCII whitespace str.split() separates on.
cdef inline bint _path_bad(unsigned char c) noexcept nogil:
    return c <= 8 or (14 <= c <= 27) or c == 127 or c == 62 or c == 46 or c == 35


cdef inline bint _ascii_space(unsigned char c) noexcept nogil:
    return c == 32 or (9 <= c <= 13) or (28 <= c <= 31)


cdef bint _ascii_value(lx_attr *attr) noexcept nogil:
    """The attribute's value is absent or all ASCII (the C segment builder can take it)."""
    cdef size_t i
    if attr == NULL or attr.value == NULL or attr.value.data == NULL:
        return True
    for i in range(attr.value.length):
        if attr.value.data[i] >= 0x80:
            return False
    return True


cdef size_t _put_parts(lx_attr *attr, unsigned char *out, size_t j, unsigned char sep,
                       size_t cap) noexcept nogil:
    """The value's whitespace-separated parts, path characters deleted, each after ``sep``
    (0: the parts joined with nothing, after one "#"), written at out[j:] up to ``cap``."""
    cdef size_t i, n
    cdef const unsigned char *v
    cdef unsigned char c
    cdef bint between = True, any_part = False
    if attr == NULL or attr.value == NULL or attr.value.data == NULL:
        return j
    v, n = attr.value.data, attr.value.length
    for i in range(n):
        c = v[i]
        if _path_bad(c):
            continue
        if _ascii_space(c):
            between = True
            continue
        if j >= cap:
            return j
        if sep:
            if between:
                out[j] = sep
                j += 1
                if j >= cap:
                    return j
        elif not any_part:
            out[j] = 35  # "#"
            j += 1
            if j >= cap:
                return j
        between = False
        any_part = True
        out[j] = c
        j += 1
    return j


cdef object _segment(lx_node *node, dict names):
    """``tag.class1.class2#id`` of one element, as html_paragraphs._segment gives it; built
    in C when its name, class and id are ASCII (the usual case), else by _segment_of."""
    cdef lx_element *el = <lx_element *> node
    cdef lx_attr *attr
    cdef lx_attr *cls_attr = NULL
    cdef lx_attr *id_attr = NULL
    cdef uintptr_t tid = node.local_name
    cdef unsigned char out[MAX_SEGMENT + 1]
    cdef const char *name_data
    cdef Py_ssize_t name_len = 0  # set by PyUnicode_AsUTF8AndSize (initialised for Cython's flow check)
    cdef size_t j
    name = names.get(tid)
    if name is None:
        # selectolax's node.tag: the written (qualified) name when lexbor kept one
        if el.qualified_name:
            if el.qualified_name < STATIC_ID_LIMIT:
                raise Unsupported("static qualified name")
            name = RAW_NAME(_lx_name(el.qualified_name))
        else:
            if tid < STATIC_ID_LIMIT:
                raise Unsupported("static tag without a known name")
            name = RAW_NAME(_lx_name(tid))
            names[tid] = name
    attr = el.first_attr
    while attr != NULL:
        if attr.node.local_name == ATTR_CLASS or attr.node.local_name == ATTR_ID:
            if attr.qualified_name != 0 or attr.node.prefix != 0:
                raise Unsupported("attribute written under another name")
            if attr.node.local_name == ATTR_CLASS:
                cls_attr = attr
            else:
                id_attr = attr
        attr = attr.next
    if cls_attr == NULL and id_attr == NULL:
        return name
    if (PyUnicode_IS_ASCII(name) and PyUnicode_GET_LENGTH(name) <= MAX_SEGMENT
            and _ascii_value(cls_attr) and _ascii_value(id_attr)):
        name_data = PyUnicode_AsUTF8AndSize(name, &name_len)
        memcpy(out, name_data, name_len)
        j = _put_parts(cls_attr, out, name_len, 46, MAX_SEGMENT + 1)
        j = _put_parts(id_attr, out, j, 0, MAX_SEGMENT + 1)
        if j > MAX_SEGMENT:  # cut, and a cut ending in "." or "#" drops it
            j = MAX_SEGMENT
            while j > 0 and (out[j - 1] == 46 or out[j - 1] == 35):
                j -= 1
        if j == <size_t> name_len:
            return name
        return PyUnicode_DecodeASCII(<char *> out, j, NULL)
    return SEGMENT(name, None if cls_attr == NULL else _attr_value(cls_attr),
                   None if id_attr == NULL else _attr_value(id_attr))


def attribute_ids(size_t element):
    """(local name id, qualified name id) of each attribute of the element at this address."""
    cdef lx_attr *attr = (<lx_element *> element).first_attr
    out = []
    while attr != NULL:
        out.append((attr.node.local_name, attr.qualified_name))
        attr = attr.next
    return out


cdef bint _has_href(lx_node *node) except -1:
    cdef lx_attr *attr = (<lx_element *> node).first_attr
    while attr != NULL:
        if attr.node.local_name == ATTR_HREF:
            if attr.qualified_name != 0 or attr.node.prefix != 0:
                raise Unsupported("attribute written under another name")
            return True
        attr = attr.next
    return False


cdef inline bint _opened(lx_node *noscript) noexcept nogil:
    """A noscript holding more than text: its markup was parsed into it (html_paragraphs)."""
    cdef lx_node *child = noscript.first_child
    while child != NULL and child.local_name == TEXT_ID:
        child = child.next
    return child != NULL


# ---- data rows (html_paragraphs._data_row and _simple_cell) ----

cdef inline int _code(lx_node *node) noexcept nogil:
    return CODES[node.local_name] if node.local_name < STATIC_ID_LIMIT else C_INLINE


cdef Py_ssize_t _nonspace_chars(const unsigned char *s, size_t n):
    """len("".join(t.split())) of the text node's bytes (invalid UTF-8 decoded with U+FFFD)."""
    cdef size_t i = 0, w
    cdef Py_ssize_t count = 0
    if not _valid_utf8(s, n):
        t = PyUnicode_DecodeUTF8(<char *> s, n, "replace")
        return len("".join(t.split()))
    while i < n:
        w = _space_len(s, i, n)
        if w:
            i += w
            continue
        if (s[i] & 0xC0) != 0x80:
            count += 1
        i += 1
    return count


cdef bint _simple_cell(lx_node *cell) except -1:
    """No table or pre-like element, at most one run of text, no blank line, at most
    MAX_CELL_CHARS non-whitespace characters (the walk follows parent links back up)."""
    cdef Py_ssize_t runs = 0, chars = 0
    cdef bint in_run = False, br = False, enter
    cdef lx_node *node = cell.first_child
    cdef lx_character_data *cd
    cdef uintptr_t tid
    cdef int code
    if node == NULL:
        return True
    while True:
        enter = False
        tid = node.local_name
        if tid == TEXT_ID:
            cd = <lx_character_data *> node
            if cd.data.data == NULL:
                raise Unsupported("text node without data")
            if not _all_space(cd.data.data, cd.data.length):
                chars += _nonspace_chars(cd.data.data, cd.data.length)
                if chars > MAX_CELL_CHARS:
                    return False
                if not in_run:
                    runs += 1
                    if runs > 1:
                        return False
                    in_run = True
                br = False
        elif tid != COMMENT_ID:
            code = _code(node)
            if code == C_INLINE or code == C_A or (code == C_NOSCRIPT and _opened(node)):
                enter = True
            elif code == C_BLOCK:
                in_run = False
                enter = True
            elif code == C_PRE or code >= C_TABLE:
                return False
            elif code == C_BR:
                if br:
                    return False
                br = True
            elif code == C_HR:
                in_run = False
        if enter and node.first_child != NULL:
            node = node.first_child
            continue
        if enter and _code(node) == C_BLOCK:
            in_run = False  # an empty block's end
        while node.next == NULL:
            node = node.parent
            if node == cell or node == NULL:
                return True
            if _code(node) == C_BLOCK:
                in_run = False
        node = node.next


cdef bint _data_row(lx_node *tr) except -1:
    cdef Py_ssize_t n = 0
    cdef lx_node *child = tr.first_child
    while child != NULL:
        if child.local_name != TEXT_ID and child.local_name != COMMENT_ID and _code(child) == C_CELL:
            if not _simple_cell(child):
                return False
            n += 1
        child = child.next
    return n >= MIN_ROW_CELLS


cdef inline object _cell_text(Buf *buf, Py_ssize_t in_link):
    """The finished run of a data row's cell, its line breaks as spaces ("" if empty)."""
    text = _take(buf, in_link)
    if text and "\n" in text:
        text = text.replace("\n", " ")
    return text


# ---- the walk ----

cdef struct Entry:
    lx_node *node
    int kind


cdef class _Walk:
    cdef Entry *stack
    cdef Py_ssize_t depth, cap
    cdef Py_ssize_t *blocks
    cdef Py_ssize_t nblocks, bcap
    cdef list paths
    cdef Py_ssize_t npaths
    cdef dict names
    cdef Buf buf

    def __cinit__(self):
        self.stack = NULL
        self.blocks = NULL
        self.buf.data = NULL
        self.buf.scratch = NULL
        self.buf.len = self.buf.cap = 0
        self.buf.items = 0

    def __dealloc__(self):
        free(self.stack)
        free(self.blocks)
        free(self.buf.data)
        free(self.buf.scratch)

    cdef int push(self, lx_node *node, int kind) except -1:
        cdef Entry *p
        if self.depth == self.cap:
            self.cap = self.cap * 2 if self.cap else 64
            p = <Entry *> realloc(self.stack, self.cap * sizeof(Entry))
            if p == NULL:
                raise MemoryError()
            self.stack = p
        self.stack[self.depth].node = node
        self.stack[self.depth].kind = kind
        self.depth += 1
        return 0

    cdef int push_block(self, Py_ssize_t i) except -1:
        cdef Py_ssize_t *p
        if self.nblocks == self.bcap:
            self.bcap = self.bcap * 2 if self.bcap else 64
            p = <Py_ssize_t *> realloc(self.blocks, self.bcap * sizeof(Py_ssize_t))
            if p == NULL:
                raise MemoryError()
            self.blocks = p
        self.blocks[self.nblocks] = i
        self.nblocks += 1
        return 0

    cdef object path_of(self, Py_ssize_t i):
        cdef Py_ssize_t k, top = i if i < MAX_PATH - 1 else MAX_PATH - 1
        for k in range(self.npaths, top + 1):
            path = self.paths[k - 1] + ">" + _segment(self.stack[k].node, self.names)
            if k < len(self.paths):
                self.paths[k] = path
            else:
                self.paths.append(path)
            self.stack[k].kind |= K_CACHED
        if top + 1 > self.npaths:
            self.npaths = top + 1
        if i == top:
            return self.paths[i]
        tail = ">".join([_segment(self.stack[k].node, self.names)
                         for k in range(i + 1 - PATH_TAIL, i + 1)])
        return self.paths[PATH_HEAD - 1] + ">...>" + tail

    cdef list run(self, lx_node *body, bint dirty, Py_ssize_t limit, object limit_text):
        cdef list out = []
        cdef lx_node *node
        cdef lx_character_data *cd
        cdef Buf *buf = &self.buf
        cdef Py_ssize_t ntags = 1, in_link = 0, pre = 0
        cdef int k, code, kind
        cdef bint row = False
        cdef list cells = []
        cdef uintptr_t tid
        self.paths = ["body"]
        self.npaths = 1
        self.names = dict(TAG_NAMES)
        self.push(body, K_BLOCK | K_CACHED)
        self.push_block(0)
        node = body.first_child
        while True:
            if node == NULL:  # the children of the top entry are done: close it
                if self.depth == 1:
                    break
                k = self.stack[self.depth - 1].kind
                if k:
                    if k & K_CELL:
                        if buf.items:
                            text = _cell_text(buf, in_link)
                            if text:
                                cells.append(text)
                    elif k & K_ROW:
                        if buf.items:
                            text = _cell_text(buf, in_link)
                            if text:
                                cells.append(text)
                        if cells:
                            out.append(PARAGRAPH(self.path_of(self.blocks[self.nblocks - 1]),
                                                 ROW_SEP.join(cells), ntags))
                            ntags = 0
                            cells = []
                        self.nblocks -= 1
                        row = False
                    elif k & K_BLOCK:
                        if buf.items:
                            text = _take(buf, in_link)
                            if text:
                                out.append(PARAGRAPH(self.path_of(self.blocks[self.nblocks - 1]),
                                                     text, ntags))
                                ntags = 0
                        self.nblocks -= 1
                        if k & K_PRE:
                            pre -= 1
                    elif k & K_LINK:
                        in_link -= 1
                        if not in_link:
                            _put(buf, 3)
                    if self.stack[self.depth - 1].kind & K_CACHED:
                        if self.npaths > self.depth - 1:
                            self.npaths = self.depth - 1
                self.depth -= 1
                node = self.stack[self.depth].node.next
                continue
            tid = node.local_name
            if tid == TEXT_ID:
                cd = <lx_character_data *> node
                node = node.next
                if cd.data.data == NULL:
                    raise Unsupported("text node without data")
                if buf.items or pre or not _all_space(cd.data.data, cd.data.length):
                    if _valid_utf8(cd.data.data, cd.data.length):
                        _put_text(buf, cd.data.data, cd.data.length, dirty, pre)
                    else:
                        fixed = PyUnicode_AsUTF8String(PyUnicode_DecodeUTF8(
                            <char *> cd.data.data, cd.data.length, "replace"))
                        _put_text(buf, <const unsigned char *> PyBytes_AS_STRING(fixed),
                                  PyBytes_GET_SIZE(fixed), dirty, pre)
                continue
            if tid == COMMENT_ID:
                node = node.next
                continue
            code = CODES[tid] if tid < STATIC_ID_LIMIT else C_INLINE
            if code == C_INLINE:
                kind = 0
            elif row:  # inside a data row: its cells split it, nothing else does
                if code == C_CELL:
                    if buf.items:
                        text = _cell_text(buf, in_link)
                        if text:
                            cells.append(text)
                    kind = K_CELL
                elif code == C_A and _has_href(node):
                    kind = K_LINK
                    if not in_link:
                        _put(buf, 2)
                    in_link += 1
                elif code == C_BR:
                    _put(buf, 1)
                    ntags += 1
                    node = node.next
                    continue
                elif ((code == C_NOSCRIPT and _opened(node)) or code <= C_PRE or code >= C_TABLE
                      or code == C_A):
                    kind = 0
                else:  # void, dropped or hr
                    ntags += 1
                    node = node.next
                    continue
            elif code <= C_PRE or code >= C_TABLE:
                if limit >= 0 and len(out) > limit:
                    raise TOO_MANY(limit_text)
                if buf.items:
                    text = _take(buf, in_link)
                    if text:
                        out.append(PARAGRAPH(self.path_of(self.blocks[self.nblocks - 1]),
                                             text, ntags))
                        ntags = 0
                self.push_block(self.depth)
                kind = K_BLOCK
                if code == C_PRE:
                    kind |= K_PRE
                    pre += 1
                elif code == C_TR and _data_row(node):
                    kind = K_ROW
                    row = True
            elif code == C_NOSCRIPT and _opened(node):
                kind = 0
            elif code == C_A:
                if _has_href(node):
                    kind = K_LINK
                    if not in_link:
                        _put(buf, 2)
                    in_link += 1
                else:
                    kind = 0
            else:  # a leaf for this walk: void or dropped
                if code == C_BR:
                    _put(buf, 1)
                elif code == C_HR and buf.items:
                    text = _take(buf, in_link)
                    if text:
                        out.append(PARAGRAPH(self.path_of(self.blocks[self.nblocks - 1]),
                                             text, ntags))
                        ntags = 0
                ntags += 1
                node = node.next
                continue
            ntags += 1
            self.push(node, kind)
            node = node.first_child  # NULL closes it right away
        if buf.items:
            text = _take(buf, 0)
            if text:
                out.append(PARAGRAPH(self.path_of(self.blocks[self.nblocks - 1]), text, ntags))
        return out


def walk(size_t body, bint dirty, Py_ssize_t max_paragraphs=-1):
    """Paragraphs under the ``body`` element at address ``body`` (``LexborNode.mem_id``;
    its parser must stay alive meanwhile), or None when the page needs the Python walk.
    ``max_paragraphs`` < 0: no limit."""
    cdef _Walk w = _Walk()
    try:
        return w.run(<lx_node *> body, dirty, max_paragraphs,
                     f"more than {max_paragraphs} paragraphs")
    except Unsupported:
        return None


# ---- lexbor_layout.pxi read back, for the import-time check against selectolax's API ----

# Longer strings than this are not read (the check's page has none): a length read at the
# wrong place fails the check instead of reading far.
cdef enum:
    LAYOUT_MAX = 4096


def layout_node(size_t node):
    """The lx_node fields of the node at this address, pointers as addresses (none followed)."""
    cdef lx_node *n = <lx_node *> node
    return {"local_name": n.local_name, "prefix": n.prefix, "next": <size_t> n.next,
            "prev": <size_t> n.prev, "parent": <size_t> n.parent, "first_child": <size_t> n.first_child,
            "last_child": <size_t> n.last_child, "type": n.type}


def layout_element(size_t element):
    """The lx_element fields of the element at this address and the lx_attr fields of each
    of its attributes (``first_attr``, then ``next``, followed): values as bytes or None."""
    cdef lx_element *el = <lx_element *> element
    cdef lx_attr *attr = el.first_attr
    attrs = []
    while attr != NULL and len(attrs) < 64:   # (a misread chain need not end)
        value = None
        if attr.value != NULL and attr.value.data != NULL:
            value = (<char *> attr.value.data)[:attr.value.length] if attr.value.length <= LAYOUT_MAX else b"?"
        attrs.append({"address": <size_t> attr, "local_name": attr.node.local_name, "prefix": attr.node.prefix,
                      "qualified_name": attr.qualified_name, "owner": <size_t> attr.owner,
                      "prev": <size_t> attr.prev, "value": value})
        attr = attr.next
    return {"qualified_name": el.qualified_name, "first_attr": <size_t> el.first_attr,
            "last_attr": <size_t> el.last_attr, "attrs": attrs}


def layout_text(size_t node):
    """The bytes of the text or comment node at this address (lx_character_data.data)."""
    cdef lx_character_data *cd = <lx_character_data *> node
    if cd.data.data == NULL or cd.data.length > LAYOUT_MAX:
        return None
    return (<char *> cd.data.data)[:cd.data.length]


def layout_tag_entry(size_t address):
    """(name, tag_id) of the lx_tag_data entry at this address (a tag id above the static
    table, or an element's qualified_name), as _lx_name reads it but unchecked."""
    cdef lx_tag_data *data = <lx_tag_data *> address
    if data.length > LAYOUT_MAX:
        return None, data.tag_id
    if data.length <= 16:
        return (<char *> data.u.short_str)[:data.length], data.tag_id
    return (<char *> data.u.long_str)[:data.length], data.tag_id
