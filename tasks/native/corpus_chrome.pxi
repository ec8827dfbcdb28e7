# Page chrome in a CSS path, as ``quality.is_chrome_path`` decides it, for ASCII paths:
# included by the corpus modules, which ask the Python function for any other path.
from cpython.unicode cimport PyUnicode_READ
from libc.stdint cimport uint32_t

cdef const char *CHROME_HEADS[5]
CHROME_HEADS[:] = [b"nav", b"footer", b"header", b"aside", b"menu"]
cdef const char *CHROME_WORDS[7]
CHROME_WORDS[:] = [b"nav", b"menu", b"footer", b"sidebar", b"breadcrumb", b"comment", b"cookie"]
cdef const char *CHROME_PLACES[11]
CHROME_PLACES[:] = [b"site", b"main", b"page", b"global", b"top", b"primary", b"secondary",
                    b"left", b"right", b"mobile", b"sub"]


cdef inline Py_ssize_t ascii_word_at(int kind, const void *data, Py_ssize_t i, Py_ssize_t end,
                                     const char *word) noexcept:
    """Length of ``word`` when the path holds it at i (ASCII letters in any case), else 0."""
    cdef Py_ssize_t k = 0
    cdef uint32_t c
    while word[k]:
        if i + k >= end:
            return 0
        c = PyUnicode_READ(kind, data, i + k)
        if 0x41 <= c <= 0x5A:
            c += 0x20
        if c != <uint32_t> word[k]:
            return 0
        k += 1
    return k


cdef int chrome_element(int kind, const void *data, Py_ssize_t a, Py_ssize_t b) noexcept:
    """``quality._is_chrome_element`` of the ASCII element path[a:b]: it starts with a chrome
    tag (followed by its end, a class or an id), or a class or id starts with a chrome word,
    alone or after a word naming where it sits and a hyphen or underscore."""
    cdef Py_ssize_t i, k, r, w
    cdef uint32_t c
    for k in range(5):
        w = ascii_word_at(kind, data, a, b, CHROME_HEADS[k])
        if w and (a + w == b or PyUnicode_READ(kind, data, a + w) == 0x2E or PyUnicode_READ(kind, data, a + w) == 0x23):
            return 1
    for i in range(a, b):
        c = PyUnicode_READ(kind, data, i)
        if c != 0x2E and c != 0x23:
            continue
        for k in range(7):
            if ascii_word_at(kind, data, i + 1, b, CHROME_WORDS[k]):
                return 1
        for k in range(11):
            r = ascii_word_at(kind, data, i + 1, b, CHROME_PLACES[k])
            if not r or i + 1 + r >= b:
                continue
            c = PyUnicode_READ(kind, data, i + 1 + r)
            if c != 0x2D and c != 0x5F:
                continue
            for w in range(7):
                if ascii_word_at(kind, data, i + 2 + r, b, CHROME_WORDS[w]):
                    return 1
    return 0


cdef int chrome_path(int kind, const void *data, Py_ssize_t a, Py_ssize_t b) noexcept:
    """1 when an element of the CSS path path[a:b] is page chrome, 0 when none is, -1 when
    the path is not ASCII (case-insensitive matching then needs Python's rules)."""
    cdef Py_ssize_t i, start = a
    cdef int found = 0
    for i in range(a, b):
        if PyUnicode_READ(kind, data, i) > 0x7F:
            return -1
    for i in range(a, b + 1):
        if i == b or PyUnicode_READ(kind, data, i) == 0x3E:
            if not found:
                found = chrome_element(kind, data, start, i)
            start = i + 1
    return found


def chrome_path_of(str path):
    """``chrome_path`` of a whole string (1, 0 or -1), for the tests."""
    return chrome_path(PyUnicode_KIND(path), PyUnicode_DATA(path), 0, len(path))
