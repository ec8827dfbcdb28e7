# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The page pre-scan in one pass over the bytes.

``warclake.tasks.extract.page_scan.reference_scan`` defines it in Python: the ``<`` bytes,
the ``</`` pairs, whether the page holds a byte U+0001-U+0005 or a character reference
``&#0*[1-5]`` / ``&#[xX]0*[1-5]`` not followed by another (hex) digit, and whether a
``<noscript`` (any case) opens a raw text of at least ``min_chars`` bytes before the next
``</noscript`` followed by one of ``\\t\\n\\f\\r /\\>`` (or before the end of the page).
"""
from libc.string cimport memchr


cdef inline unsigned char lower(unsigned char c) nogil:
    return c + 32 if 65 <= c <= 90 else c


cdef inline bint is_digit(unsigned char c) nogil:
    return 48 <= c <= 57


cdef inline bint is_hex(unsigned char c) nogil:
    return is_digit(c) or 97 <= lower(c) <= 102


cdef inline bint word_at(const unsigned char *p, Py_ssize_t n, Py_ssize_t i, const char *word,
                         Py_ssize_t length) nogil:
    """Whether ``word`` (lower case) is at ``i`` in any ASCII case."""
    cdef Py_ssize_t k
    if i + length > n:
        return False
    for k in range(length):
        if lower(p[i + k]) != <unsigned char>word[k]:
            return False
    return True


cdef inline bint ctrl_ref_at(const unsigned char *p, Py_ssize_t n, Py_ssize_t i) nogil:
    """Whether a reference to U+0001-U+0005 starts at ``i`` (``p[i]`` is ``&``)."""
    cdef bint hexadecimal = False
    cdef Py_ssize_t j = i + 1
    if j >= n or p[j] != 35:    # '#'
        return False
    j += 1
    if j < n and (p[j] == 120 or p[j] == 88):   # 'x', 'X'
        hexadecimal = True
        j += 1
    while j < n and p[j] == 48:   # '0'
        j += 1
    if j >= n or not (49 <= p[j] <= 53):   # '1'-'5'
        return False
    j += 1
    if j >= n:
        return True
    return not (is_hex(p[j]) if hexadecimal else is_digit(p[j]))


cdef Py_ssize_t next_open(const unsigned char *p, Py_ssize_t n, Py_ssize_t i) nogil:
    """Start of the first ``<noscript`` at or after ``i``, or -1."""
    cdef const unsigned char *at
    while i < n:
        at = <const unsigned char *>memchr(p + i, 60, n - i)
        if at == NULL:
            return -1
        i = at - p
        if word_at(p, n, i + 1, b"noscript", 8):
            return i
        i += 1
    return -1


cdef Py_ssize_t next_close(const unsigned char *p, Py_ssize_t n, Py_ssize_t i) nogil:
    """Start of the first ``</noscript`` + terminator at or after ``i``, or -1."""
    cdef const unsigned char *at
    cdef unsigned char c
    while i < n:
        at = <const unsigned char *>memchr(p + i, 60, n - i)
        if at == NULL:
            return -1
        i = at - p
        if i + 10 < n and p[i + 1] == 47 and word_at(p, n, i + 2, b"noscript", 8):
            c = p[i + 10]
            if c == 9 or c == 10 or c == 12 or c == 13 or c == 32 or c == 47 or c == 62:
                return i
        i += 1
    return -1


cdef bint long_noscript(const unsigned char *p, Py_ssize_t n, Py_ssize_t first, Py_ssize_t min_chars) nogil:
    """As html_paragraphs._long_noscript, from the first ``<noscript`` at ``first``. The end
    tag found for one start tag serves the next while it lies past that one's end."""
    cdef Py_ssize_t start = first, end, close = -2   # -2: not looked for yet
    while start >= 0:
        end = start + 9
        if close == -2 or (close >= 0 and close < end):
            close = next_close(p, n, end)
        if (close if close >= 0 else n) - end >= min_chars:
            return True
        start = next_open(p, n, end)
    return False


cdef Py_ssize_t first_open(const unsigned char *p, Py_ssize_t n) nogil:
    return next_open(p, n, 0)


cdef bint any_ctrl_ref(const unsigned char *p, Py_ssize_t n) nogil:
    cdef const unsigned char *at
    cdef Py_ssize_t i = 0
    while i < n:
        at = <const unsigned char *>memchr(p + i, 38, n - i)   # '&'
        if at == NULL:
            return False
        i = at - p
        if ctrl_ref_at(p, n, i):
            return True
        i += 1
    return False


def scan(const unsigned char[::1] html, Py_ssize_t min_chars):
    """(``<`` count, ``</`` count, dirty, long noscript) of ``html``."""
    cdef Py_ssize_t n = html.shape[0], i, lt = 0, ends = 0, first
    cdef const unsigned char *p
    cdef Py_ssize_t k, block
    cdef unsigned char c, d, ctrl = 0, lt_n = 0, lt_b, ends_b
    cdef bint dirty, found
    if n == 0:
        return 0, 0, False, False
    p = &html[0]
    with nogil:
        # branch-free over the bytes (vectorised): the counts, a byte U+0001-5, a "<n"/"<N";
        # in blocks of 255 bytes whose counts fit a byte (the vectors' lanes)
        i = 0
        while i < n - 1:
            block = min(255, n - 1 - i)
            lt_b = ends_b = 0
            for k in range(i, i + block):
                c = p[k]
                d = p[k + 1]
                lt_b += c == 60
                ends_b += (c == 60) & (d == 47)
                ctrl |= <unsigned char>(c - 1) < 5
                lt_n |= (c == 60) & ((d | 32) == 110)
            lt += lt_b
            ends += ends_b
            i += block
        c = p[n - 1]
        lt += c == 60
        ctrl |= <unsigned char>(c - 1) < 5
        dirty = ctrl or any_ctrl_ref(p, n)
        found = False
        if lt_n:
            first = first_open(p, n)
            found = first >= 0 and long_noscript(p, n, first, min_chars)
    return lt, ends, dirty, found
