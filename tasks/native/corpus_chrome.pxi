# Page chrome in a CSS path, as ``quality.is_chrome_path`` decides it, for ASCII paths:
# included by the corpus modules, which ask the Python function for any other path.
from cpython.unicode cimport PyUnicode_READ
from libc.stdint cimport uint32_t

cdef const char *CHROME_HEADS[5]
CHROME_HEADS[:] = [b"nav", b"footer", b"header", b"aside", b"menu"]
cdef const char *CHROME_WORDS[12]
CHROME_WORDS[:] = [b"nav", b"navbar", b"navigation", b"menu", b"footer", b"sidebar", b"breadcrumb",
                   b"breadcrumbs", b"comment", b"comments", b"cookie", b"cookies"]
cdef const char *CHROME_PLACES[11]
CHROME_PLACES[:] = [b"site", b"main", b"page", b"global", b"top", b"primary", b"secondary",
                    b"left", b"right", b"mobile", b"sub"]
cdef const char *LAYOUT_WORDS[15]
LAYOUT_WORDS[:] = [b"left", b"right", b"true", b"false", b"on", b"off", b"open", b"closed", b"active",
                   b"hidden", b"none", b"yes", b"no", b"enabled", b"disabled"]


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


cdef inline int word_in(int kind, const void *data, Py_ssize_t a, Py_ssize_t b, const char **words,
                        int n) noexcept:
    """Index of the word path[a:b] (any case) in ``words``, or -1."""
    cdef int k
    if b <= a:
        return -1
    for k in range(n):
        if ascii_word_at(kind, data, a, b, words[k]) == b - a:
            return k
    return -1


cdef inline Py_ssize_t word_end(int kind, const void *data, Py_ssize_t i, Py_ssize_t b) noexcept:
    """End of the word of a class or id name starting at i (at '-', '_' or the name's end)."""
    cdef uint32_t c
    while i < b:
        c = PyUnicode_READ(kind, data, i)
        if c == 0x2D or c == 0x5F:
            break
        i += 1
    return i


cdef int chrome_name(int kind, const void *data, Py_ssize_t a, Py_ssize_t b) noexcept:
    """``quality._is_chrome_name`` of the ASCII class or id name path[a:b]."""
    cdef Py_ssize_t e = word_end(kind, data, a, b)
    cdef int place = -1, w
    if e < b:
        place = word_in(kind, data, a, e, CHROME_PLACES, 11)
    if place >= 0:
        a = e + 1
        e = word_end(kind, data, a, b)
    w = word_in(kind, data, a, e, CHROME_WORDS, 12)
    if w < 0:
        return 0
    if place >= 0 and w == 5 and (place == 7 or place == 8):
        return 0      # left-sidebar, right-sidebar: a layout
    if e == b:
        return 1
    while e < b:      # after the chrome word: only layout words make it a layout
        a = e + 1
        e = word_end(kind, data, a, b)
        if word_in(kind, data, a, e, LAYOUT_WORDS, 15) < 0:
            return 1
    return 0


cdef int chrome_element(int kind, const void *data, Py_ssize_t a, Py_ssize_t b) noexcept:
    """``quality._is_chrome_element`` of the ASCII element path[a:b]: it starts with a chrome
    tag (followed by its end, a class or an id), or one of its class or id names is chrome."""
    cdef Py_ssize_t i, k, w, e
    cdef uint32_t c
    for k in range(5):
        w = ascii_word_at(kind, data, a, b, CHROME_HEADS[k])
        if w and (a + w == b or PyUnicode_READ(kind, data, a + w) == 0x2E or PyUnicode_READ(kind, data, a + w) == 0x23):
            return 1
    i = a
    while i < b:
        c = PyUnicode_READ(kind, data, i)
        if c != 0x2E and c != 0x23:
            i += 1
            continue
        e = i + 1
        while e < b and PyUnicode_READ(kind, data, e) != 0x2E and PyUnicode_READ(kind, data, e) != 0x23:
            e += 1
        if chrome_name(kind, data, i + 1, e):
            return 1
        i = e
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

