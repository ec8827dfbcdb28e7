# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The language stage's text scans in C: the Uzushio buffer, Latin letters, the English screen.

``warclake.tasks.extract.language`` defines each in Python (``reference_language_buffer``,
``reference_latin_letters``, ``reference_english_words_share``); these give the same values.
Character classes are CPython's own (``Py_UNICODE_ISSPACE`` is ``str.isspace`` and the
regular expressions' ``\\s``; ``Py_UNICODE_ISALNUM`` and ``Py_UNICODE_ISDECIMAL`` make their
``\\w`` and ``\\d``). The hidden blocks' openers are matched here as ``_HIDDEN_OPEN`` matches
them (the spellings it lists, in its order, not followed by a word character or ``-``); their
closers, which match case-blind as Unicode folds case, by the reference's own patterns.
"""
from cpython.unicode cimport (
    Py_UCS1,
    Py_UCS2,
    Py_UNICODE_ISALNUM,
    Py_UNICODE_ISDECIMAL,
    Py_UNICODE_ISSPACE,
    PyUnicode_4BYTE_KIND,
    PyUnicode_DATA,
    PyUnicode_FromKindAndData,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
    PyUnicode_READ,
)
from libc.stdint cimport uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr

cdef enum:
    MAX_WORD = 16          # longer words are in neither word list (checked by configure)
    TABLE = 512            # slots of the word table (a power of two, over twice the words)

cdef struct Entry:
    uint64_t hash
    int start, length      # code points in WORD_CHARS
    int english            # index among the English words, or -1
    bint foreign

cdef Entry SLOTS[TABLE]
cdef uint32_t WORD_CHARS[TABLE * MAX_WORD]
cdef int N_ENGLISH = 0
cdef bint CONFIGURED = False
cdef object HIDDEN_CLOSE = None   # language._HIDDEN_CLOSE: opener spelling -> its closer
cdef tuple OPENERS = ()           # the openers' spellings, in the pattern's order
cdef char FIRSTS[128]             # the ASCII characters an opener (or "!--") starts with


cdef inline uint64_t _mix(uint64_t h, uint32_t c) noexcept nogil:
    return (h ^ c) * 1099511628211ULL


def configure(english_words, foreign_words, openers, hidden_close) -> None:
    """The screen's word lists (lower-case words of at most MAX_WORD characters), the
    spellings of the hidden blocks' openers in the order ``language._HIDDEN_OPEN`` tries them
    (each matched after a ``<``, then not followed by a word character or ``-``; ``<!--``
    after them) and their closers' patterns (``language._HIDDEN_CLOSE``)."""
    global N_ENGLISH, CONFIGURED, OPENERS, HIDDEN_CLOSE
    cdef int i, k, used = 0
    cdef uint64_t h
    cdef Py_ssize_t slot
    for i in range(TABLE):
        SLOTS[i].length = -1
    english = sorted(english_words)
    words = english + sorted(set(foreign_words) - set(english_words))
    if 2 * len(words) > TABLE:
        raise ValueError("too many screen words for the table")
    N_ENGLISH = len(english)
    for i, w in enumerate(words):
        if not isinstance(w, str) or not 0 < len(w) <= MAX_WORD:
            raise ValueError(f"screen word {w!r} is not a word of 1-{MAX_WORD} characters")
        h = 1469598103934665603ULL
        for k in range(len(w)):
            WORD_CHARS[used + k] = ord(w[k])
            h = _mix(h, ord(w[k]))
        slot = h & (TABLE - 1)
        while SLOTS[slot].length >= 0:
            slot = (slot + 1) & (TABLE - 1)
        SLOTS[slot].hash = h
        SLOTS[slot].start = used
        SLOTS[slot].length = len(w)
        SLOTS[slot].english = i if i < N_ENGLISH else -1
        SLOTS[slot].foreign = w in foreign_words
        used += len(w)
    OPENERS = tuple(openers)
    for i in range(128):
        FIRSTS[i] = 0
    FIRSTS[0x21] = 1
    for o in OPENERS:
        if o:
            FIRSTS[ord(o[0]) & 0x7F] = 1
    if not all(isinstance(o, str) and o.isascii() and o in hidden_close for o in OPENERS):
        raise ValueError("an opener is not an ASCII spelling with a closer")
    HIDDEN_CLOSE = hidden_close
    CONFIGURED = True


cdef inline bint _latin_letter(Py_UCS4 c) noexcept nogil:
    # [A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]
    if c < 0x80:
        return (0x41 <= c <= 0x5A) or (0x61 <= c <= 0x7A)
    return 0xC0 <= c <= 0x24F and c != 0xD7 and c != 0xF7


def latin_letters(str text) -> int:
    """``reference_latin_letters(text)``."""
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(text), count = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    for i in range(n):
        if _latin_letter(PyUnicode_READ(kind, data, i)):
            count += 1
    return count


cdef inline bint _word_char(Py_UCS4 c) noexcept:
    # [^\W\d_] of a str pattern: \w is alphanumeric or "_", \d a decimal digit
    if c < 0x80:
        return (0x41 <= c <= 0x5A) or (0x61 <= c <= 0x7A)
    return Py_UNICODE_ISALNUM(c) and not Py_UNICODE_ISDECIMAL(c)


cdef int _lookup(int kind, void *data, Py_ssize_t a, Py_ssize_t b, bint *foreign) noexcept:
    """The table entry of the word data[a:b]: its English index (-1: not English), with
    ``foreign`` set; -2 when it is in neither list."""
    cdef Py_ssize_t n = b - a, k
    cdef uint64_t h = 1469598103934665603ULL
    cdef Py_ssize_t slot
    cdef Entry *e
    if n > MAX_WORD:
        return -2
    for k in range(a, b):
        h = _mix(h, PyUnicode_READ(kind, data, k))
    slot = h & (TABLE - 1)
    while SLOTS[slot].length >= 0:
        e = &SLOTS[slot]
        if e.hash == h and e.length == n:
            for k in range(n):
                if WORD_CHARS[e.start + k] != PyUnicode_READ(kind, data, a + k):
                    break
            else:
                foreign[0] = e.foreign
                return e.english
        slot = (slot + 1) & (TABLE - 1)
    return -2


def english_words_share(str text, Py_ssize_t letters, Py_ssize_t min_words, double min_share,
                        Py_ssize_t min_distinct, double max_foreign, double max_accented):
    """``reference_english_words_share(text, letters)`` with the screen's settings given."""
    if not CONFIGURED:
        raise RuntimeError("language_text is not configured")
    cdef str low = text.lower()
    cdef Py_ssize_t i, j, n = PyUnicode_GET_LENGTH(low), words = 0, e = 0, foreign = 0, distinct = 0
    cdef int kind = PyUnicode_KIND(low)
    cdef void *data = PyUnicode_DATA(low)
    cdef int hit
    cdef bint is_foreign
    cdef char seen[TABLE]
    for i in range(N_ENGLISH):
        seen[i] = 0
    i = 0
    while i < n:
        if not _word_char(PyUnicode_READ(kind, data, i)):
            i += 1
            continue
        j = i + 1
        while j < n and _word_char(PyUnicode_READ(kind, data, j)):
            j += 1
        words += 1
        is_foreign = False
        hit = _lookup(kind, data, i, j, &is_foreign)
        if hit >= 0:
            e += 1
            if not seen[hit]:
                seen[hit] = 1
                distinct += 1
        if hit != -2 and is_foreign:
            foreign += 1
        i = j
    if words < min_words:
        return None
    if e < min_share * words:
        return None
    if foreign > max_foreign * e or distinct < min_distinct:
        return None
    cdef Py_ssize_t ascii_letters = 0
    n = PyUnicode_GET_LENGTH(text)
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    cdef Py_UCS4 c
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if (0x41 <= c <= 0x5A) or (0x61 <= c <= 0x7A):
            ascii_letters += 1
    if letters - ascii_letters > max_accented * letters:
        return None
    return e / <double> (e + foreign)


# ---- the Uzushio buffer ----

cdef struct Out:
    uint32_t *p
    Py_ssize_t n, cap


cdef int _reserve(Out *o, Py_ssize_t need) except -1:
    """Room for ``need`` characters in all."""
    cdef Py_ssize_t cap
    cdef uint32_t *p
    if need > o.cap:
        cap = max(need, 2 * o.cap, 1024)
        p = <uint32_t *> realloc(o.p, cap * sizeof(uint32_t))
        if p == NULL:
            raise MemoryError()
        o.p, o.cap = p, cap
    return 0


cdef int _put(Out *o, uint32_t c) except -1:
    _reserve(o, o.n + 1)
    o.p[o.n] = c
    o.n += 1
    return 0


ctypedef fused char_t:   # a str's code units, by its kind
    Py_UCS1
    Py_UCS2
    Py_UCS4


cdef inline bint _skipped(Py_UCS4 c) noexcept:
    # [\x00-\x7e\s]; above U+007E whitespace starts at U+0085
    return c <= 0x7E or (c >= 0x85 and Py_UNICODE_ISSPACE(c))


cdef Py_ssize_t _collapse(Out *o, const char_t *d, Py_ssize_t a, Py_ssize_t b) except -1:
    """Append _SKIPPED.sub(" ", text[a:b]) (d: the text's code units); the characters appended."""
    cdef Py_ssize_t i = a, start = o.n
    cdef uint32_t *p
    _reserve(o, o.n + (b - a))   # never more than one character out per character in
    p = o.p
    while i < b:
        if _skipped(d[i]):
            p[o.n] = 32
            o.n += 1
            i += 1
            while i < b and _skipped(d[i]):
                i += 1
        else:
            p[o.n] = d[i]
            o.n += 1
            i += 1
    return o.n - start


cdef Py_ssize_t _collapse_into(Out *o, int kind, void *data, Py_ssize_t a, Py_ssize_t b) except -1:
    if kind == 1:
        return _collapse(o, <const Py_UCS1 *> data, a, b)
    if kind == 2:
        return _collapse(o, <const Py_UCS2 *> data, a, b)
    return _collapse(o, <const Py_UCS4 *> data, a, b)


cdef Py_ssize_t _find_lt(const char_t *d, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    """The first "<" in d[i:end], or end."""
    while i < end and d[i] != 0x3C:
        i += 1
    return i


cdef inline bint _name_char(Py_UCS4 c) noexcept:
    # [\w-] of a str pattern
    if c < 0x80:
        return (0x30 <= c <= 0x39) or (0x41 <= c <= 0x5A) or (0x61 <= c <= 0x7A) or c == 0x5F or c == 0x2D
    return Py_UNICODE_ISALNUM(c)


cdef Py_ssize_t _opener_at(int kind, void *data, Py_ssize_t i, Py_ssize_t end, Py_ssize_t *after):
    """Which opener _HIDDEN_OPEN matches at the "<" at i in text[:end] (its index; -1 for a
    comment, -2 for none), and where the match ends."""
    cdef Py_ssize_t k, m, j
    cdef str o
    if i + 1 >= end:
        return -2
    cdef Py_UCS4 first = PyUnicode_READ(kind, data, i + 1)
    if first >= 0x80 or not FIRSTS[first]:   # no opener starts so: the usual "<div", "</p"
        return -2
    for k in range(len(OPENERS)):
        o = <str> OPENERS[k]
        m = PyUnicode_GET_LENGTH(o)
        if i + 1 + m > end:
            continue
        for j in range(m):
            if PyUnicode_READ(kind, data, i + 1 + j) != PyUnicode_READ(PyUnicode_KIND(o), PyUnicode_DATA(o), j):
                break
        else:
            if i + 1 + m == end or not _name_char(PyUnicode_READ(kind, data, i + 1 + m)):
                after[0] = i + 1 + m
                return k
    if (i + 4 <= end and PyUnicode_READ(kind, data, i + 1) == 0x21 and PyUnicode_READ(kind, data, i + 2) == 0x2D
            and PyUnicode_READ(kind, data, i + 3) == 0x2D):
        after[0] = i + 4
        return -1
    return -2


cdef tuple _next_hidden_block(str text, Py_ssize_t pos, Py_ssize_t bound, Py_ssize_t limit):
    """language._next_hidden_block: the openers found here, their ends by the closers' patterns."""
    cdef Py_ssize_t end = min(limit, bound + 10), i, k, after = 0, close_at
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef const char *bytes_
    cdef const char *hit
    i = pos
    while i < end:
        if kind == 1:   # one byte per character: memchr finds the next "<"
            bytes_ = <const char *> data
            hit = <const char *> memchr(bytes_ + i, 0x3C, end - i)
            if hit == NULL:
                break
            i = hit - bytes_
        else:
            i = _find_lt(<const Py_UCS2 *> data, i, end) if kind == 2 else _find_lt(<const Py_UCS4 *> data, i, end)
            if i >= end:
                break
        if i >= bound:   # whatever opens from here, the answer is (bound, bound)
            break
        k = _opener_at(kind, data, i, end, &after)
        if k == -2:
            i += 1
            continue
        if k == -1:
            close_at = text.find("-->", after, limit)
            return i, (close_at + 3 if close_at >= 0 else limit)
        close = HIDDEN_CLOSE[OPENERS[k]].search(text, after, limit)
        return i, (close.end() if close else limit)
    return bound, bound


def language_buffer(str text, Py_ssize_t max_chars, Py_ssize_t window, Py_ssize_t read_factor):
    """``reference_language_buffer(text, max_chars, window)`` (READ_FACTOR given)."""
    if not CONFIGURED:
        raise RuntimeError("language_text is not configured")
    if text.isascii():
        return ""
    cdef Out o
    o.p, o.n, o.cap = NULL, 0, 0
    cdef Py_ssize_t have = 0, step = 2 * max_chars, left = window, pos = 0, start, end_of_block, m
    cdef Py_ssize_t limit = min(PyUnicode_GET_LENGTH(text), read_factor * window)
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, j, a, b
    cdef bint space
    try:
        while left > 0 and have <= max_chars and pos < limit:
            start, end_of_block = _next_hidden_block(text, pos, min(limit, pos + left), limit)
            while pos < start and left > 0:
                m = min(step, start - pos, left)
                have += _collapse_into(&o, kind, data, pos, pos + m)
                pos += m
                left -= m
                if have > max_chars:
                    break
            if pos < start or end_of_block <= pos:
                break
            pos = end_of_block
            _put(&o, 32)
        # runs of spaces become one (only pieces' joins make them), then strip and cut
        j = 0
        space = False
        for i in range(o.n):
            if o.p[i] == 32:
                if space:
                    continue
                space = True
            else:
                space = False
            o.p[j] = o.p[i]
            j += 1
        a, b = 0, j
        while a < b and Py_UNICODE_ISSPACE(o.p[a]):
            a += 1
        while b > a and Py_UNICODE_ISSPACE(o.p[b - 1]):
            b -= 1
        if b - a > max_chars:
            b = a + max_chars
        if b <= a:
            return ""
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, o.p + a, b - a)
    finally:
        free(o.p)
