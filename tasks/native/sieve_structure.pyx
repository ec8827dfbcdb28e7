# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The page-structure columns of ``warclake.tasks.extract.boilerplate.structure`` in C.

``fill(X, paths, plains, in_main_col)`` writes exactly ``structure.columns``'s block into
the last columns of the feature matrix ``X``: stems found in the class/id names of each
path element (product carousels and sliders among them), record lines under the parent
and grandparent, the columns after comment and related headings, after the main container
and after the page's first ``h1``, the share of the main container's text before the
paragraph, and the page-type columns (record lists found through containers interned by
parent and element text, price lines, the page's shares under stem groups). The
short-line patterns (dates, record lines, comment and related headings) are matched in C
(``_date_line`` and the others, exactly what their regular expressions find). ``compiled.choose_matrix`` checks the
whole matrix against the Python reference on import.
"""
from libc.math cimport copysign, log, log1p
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcmp, memset
from cpython.unicode cimport Py_UNICODE_ISALNUM, Py_UNICODE_ISDECIMAL, Py_UNICODE_ISSPACE

import zlib

import numpy as np


cdef extern from *:
    int __builtin_ctz(unsigned int) nogil


cdef extern from "Python.h":
    int PyUnicode_IS_ASCII(object)
    void* PyUnicode_DATA(object)
    int PyUnicode_KIND(object)
    Py_UCS4 PyUnicode_READ(int kind, void* data, Py_ssize_t index)

# The characters other than ASCII that a case-insensitive pattern's ASCII letter matches
# (İ ı ſ K; tests/test_boilerplate_structure.py checks the list against ``re``).
FOLDS_TO_ASCII = (0x130, 0x131, 0x17F, 0x212A)


# The short-line patterns in C. Each matcher below answers whether ``pattern.search(line)``
# finds a match, for the patterns whose checksums are given (``configure``; another pattern
# runs as the Python regular expression on every line). Python's ``re`` on a str with
# IGNORECASE reads ``\w`` as str.isalnum() or "_", ``\d`` as str.isdecimal(), ``\s`` as
# str.isspace(), an ASCII letter as the characters whose lower case it is, ``.`` as anything
# but "\n" and ``$`` as the end or before a final "\n"; the matchers read a line the same way
# (Py_UNICODE_ISALNUM, ISDECIMAL, ISSPACE are the functions ``re`` calls). A line holding one
# of FOLDS_TO_ASCII goes to the Python pattern. The patterns hold no look-around, back
# reference or atomic group, so a match exists exactly when one of the ways through their
# alternatives and repeats fits, which the matchers try in turn.
_PATTERN_CRC = {"date": 3520220039, "record": 3702116829, "comment": 1907378424,
                "related": 151458040}
cdef enum:
    SET_DATE = 0
    SET_RECORD = 1
    SET_COMMENT = 2
    SET_RELATED = 3
    LINE_CAP = 96       # the longest line read in C (SHORT_CHARS and HEAD_CHARS at most)
    LINE_PAD = 32       # zeros after a line: literals compared past its end match nothing
    CL_WORD = 1
    CL_DIGIT = 2
    CL_SPACE = 4
    MAX_ENDS = 32
cdef bint C_ON[4]

cdef struct Line:
    Py_ssize_t n
    unsigned char low[LINE_CAP + LINE_PAD]   # ASCII lower-cased; 0 outside ASCII
    unsigned char cls[LINE_CAP + LINE_PAD]   # CL_WORD, CL_DIGIT, SPACE bits

cdef unsigned char ASCII_CLS[128]


cdef void _ascii_classes() noexcept:
    cdef int c
    for c in range(128):
        ASCII_CLS[c] = 0
        if Py_UNICODE_ISALNUM(c) or c == 95:
            ASCII_CLS[c] |= CL_WORD
        if Py_UNICODE_ISDECIMAL(c):
            ASCII_CLS[c] |= CL_DIGIT
        if Py_UNICODE_ISSPACE(c):
            ASCII_CLS[c] |= CL_SPACE


_ascii_classes()


cdef int _line(Line* L, str t) noexcept:
    """Fill L from the line t (at most LINE_CAP characters); -1 when it holds a character
    of FOLDS_TO_ASCII (the Python pattern decides then)."""
    cdef Py_ssize_t n = len(t), i
    cdef int kind = PyUnicode_KIND(t)
    cdef void* data = PyUnicode_DATA(t)
    cdef Py_UCS4 u
    cdef unsigned char c
    L.n = n
    for i in range(n):
        u = PyUnicode_READ(kind, data, i)
        if u < 128:
            c = <unsigned char>u
            L.low[i] = c + 32 if 65 <= c <= 90 else c
            L.cls[i] = ASCII_CLS[c]
        else:
            if u == 0x130 or u == 0x131 or u == 0x17F or u == 0x212A:
                return -1
            L.low[i] = 0
            L.cls[i] = ((CL_WORD if Py_UNICODE_ISALNUM(u) else 0)
                        | (CL_DIGIT if Py_UNICODE_ISDECIMAL(u) else 0)
                        | (CL_SPACE if Py_UNICODE_ISSPACE(u) else 0))
    memset(&L.low[n], 0, LINE_PAD)
    memset(&L.cls[n], 0, LINE_PAD)
    return 0


cdef inline bint _bnd(const Line* L, Py_ssize_t j) noexcept:
    """``\b`` at j: a word character on one side only."""
    return (j > 0 and (L.cls[j - 1] & CL_WORD) != 0) != (j < L.n and (L.cls[j] & CL_WORD) != 0)


cdef inline Py_ssize_t _spaces(const Line* L, Py_ssize_t j) noexcept:
    """The end of the run of ``\s`` from j."""
    while L.cls[j] & CL_SPACE:
        j += 1
    return j


cdef inline Py_ssize_t _digits(const Line* L, Py_ssize_t j) noexcept:
    while L.cls[j] & CL_DIGIT:
        j += 1
    return j


cdef inline bint _nonword_to_end(const Line* L, Py_ssize_t j) noexcept:
    """``\W*$`` from j."""
    while j < L.n:
        if L.cls[j] & CL_WORD:
            return False
        j += 1
    return True


cdef inline bint _is_digit(const Line* L, Py_ssize_t j) noexcept:
    return (L.cls[j] & CL_DIGIT) != 0


cdef int _alts(const Line* L, Py_ssize_t p, int alts, Py_ssize_t* ends) noexcept:
    """The ends of the literals of set ``alts`` found at p (their letters matching either
    case), in the order given; their number."""
    cdef int k = 0, i, j, m
    cdef unsigned int bits
    if p < 0 or p > L.n:
        return 0
    bits = ALT_MASK[alts][L.low[p]]
    while bits:
        i = __builtin_ctz(bits)
        bits &= bits - 1
        m = ALT_LEN_OF[alts][i]
        j = 1
        while j < m and L.low[p + j] == ALT_LIT[alts][i][j]:
            j += 1
        if j == m:
            ends[k] = p + m
            k += 1
    return k


cdef enum:
    A_MONTHS
    A_RECORD_WHOLE
    A_COMMENTS_ALONE
    A_UNITS
    A_AGO
    A_SAYS
    A_REPLY
    A_NUMBERS
    A_RESPONSES
    A_LEAVE
    A_A_YOUR_NEW
    A_COMMENT_REPLY
    A_READER
    A_JOIN
    A_THE
    A_DISCUSSION
    A_WHAT_THINK
    A_TRACKBACK
    A_RELATED
    A_MOST
    A_MOST_WHAT
    A_MORE_LATEST
    A_POSTS
    A_MORE_SP
    A_FROM_ON_IN
    A_YOU
    A_MAY_MIGHT
    A_LIKE
    A_ALSO_SP
    A_READ_SEE
    A_MORE_ALSO
    A_ALSO_ELSEWHERE
    A_ON_IN_FROM
    A_AROUND
    N_ALTS

cdef enum:
    ALT_MAX = 32        # literals in a set
    ALT_LEN = 24        # characters in a literal
cdef const char* ALT_TEXT[N_ALTS]
# set k's literals: ALT_N[k] of them, literal i's text ALT_LIT[k][i] of ALT_LEN_OF[k][i]
# characters; ALT_MASK[k][c]: the literals that start with byte c, as bits
cdef int ALT_N[N_ALTS]
cdef unsigned char ALT_LIT[N_ALTS][ALT_MAX][ALT_LEN]
cdef int ALT_LEN_OF[N_ALTS][ALT_MAX]
cdef unsigned int ALT_MASK[N_ALTS][256]


cdef int _alt_tables() except -1:
    """The literal sets of the matchers ("|"-separated, lower case) as tables."""
    cdef int k, i, c
    ALT_TEXT[A_MONTHS] = b'jan|january|feb|february|mar|march|apr|april|may|jun|june|jul|july|aug|august|sep|sept|september|oct|october|nov|november|dec|december'
    ALT_TEXT[A_RECORD_WHOLE] = b'reply|report|report abuse|permalink|quote|like|flag|recommend|link to this'
    ALT_TEXT[A_COMMENTS_ALONE] = b'comment|comments|responses|discussion|replies'
    ALT_TEXT[A_UNITS] = b'minute|minutes|hour|hours|day|days|week|weeks|month|months|year|years'
    ALT_TEXT[A_AGO] = b'ago'
    ALT_TEXT[A_SAYS] = b'says|said|wrote'
    ALT_TEXT[A_REPLY] = b'reply'
    ALT_TEXT[A_NUMBERS] = b'no|one|two|three'
    ALT_TEXT[A_RESPONSES] = b'comment|comments|response|responses|replies|thoughts|reactions|opinions'
    ALT_TEXT[A_LEAVE] = b'leave|post|add|write|submit'
    ALT_TEXT[A_A_YOUR_NEW] = b'a|your|new'
    ALT_TEXT[A_COMMENT_REPLY] = b'comment|reply|response'
    ALT_TEXT[A_READER] = b'reader|user|your'
    ALT_TEXT[A_JOIN] = b'join|start'
    ALT_TEXT[A_THE] = b' the '
    ALT_TEXT[A_DISCUSSION] = b'discussion|conversation'
    ALT_TEXT[A_WHAT_THINK] = b'what do you think'
    ALT_TEXT[A_TRACKBACK] = b'trackback'
    ALT_TEXT[A_RELATED] = b'related|recommended|similar|popular|trending'
    ALT_TEXT[A_MOST] = b'most '
    ALT_TEXT[A_MOST_WHAT] = b'read|popular|viewed|emailed|shared|commented'
    ALT_TEXT[A_MORE_LATEST] = b'more|latest|recent|top'
    ALT_TEXT[A_POSTS] = b'posts|stories|articles|news|reads|videos|links|headlines|entries'
    ALT_TEXT[A_MORE_SP] = b'more '
    ALT_TEXT[A_FROM_ON_IN] = b'from|on|in'
    ALT_TEXT[A_YOU] = b'you '
    ALT_TEXT[A_MAY_MIGHT] = b'may |might '
    ALT_TEXT[A_LIKE] = b'like|enjoy|be interested'
    ALT_TEXT[A_ALSO_SP] = b'also '
    ALT_TEXT[A_READ_SEE] = b'read |see '
    ALT_TEXT[A_MORE_ALSO] = b'more|also'
    ALT_TEXT[A_ALSO_ELSEWHERE] = b'also |elsewhere '
    ALT_TEXT[A_ON_IN_FROM] = b'on|in|from'
    ALT_TEXT[A_AROUND] = b'around the web'
    for k in range(N_ALTS):
        for c in range(256):
            ALT_MASK[k][c] = 0
        words = (<bytes>ALT_TEXT[k]).split(b"|")
        if len(words) > ALT_MAX or max(map(len, words)) >= ALT_LEN:
            raise ValueError("literal set too large")
        ALT_N[k] = len(words)
        for i in range(len(words)):
            ALT_LEN_OF[k][i] = len(words[i])
            for c in range(len(words[i])):
                ALT_LIT[k][i][c] = words[i][c]
            ALT_MASK[k][words[i][0]] |= 1u << i
    return 0


_alt_tables()


cdef bint _date_line(const Line* L) noexcept:
    """structure._DATE_LINE.search(line) is not None."""
    cdef Py_ssize_t n = L.n, p, r, s, t, q, q2, e, f, k, k1, k2, k3
    cdef Py_ssize_t ends[MAX_ENDS]
    cdef Py_ssize_t ends2[MAX_ENDS]
    cdef int m, m2, j, j2
    cdef unsigned char c
    for p in range(n):
        if L.cls[p] & CL_DIGIT:
            if not _bnd(L, p):
                continue
            for k in range(1, 3):
                if k == 2 and not _is_digit(L, p + 1):
                    break
                r = p + k
                # \b\d{1,2}\s+(months)\b
                s = _spaces(L, r)
                if s > r:
                    m = _alts(L, s, A_MONTHS, ends)
                    for j in range(m):
                        if _bnd(L, ends[j]):
                            return True
                # \b\d{1,2}[:.]\d{2}\s*([ap]\.?m\b)
                if (L.low[r] == 58 or L.low[r] == 46) and _is_digit(L, r + 1) and _is_digit(L, r + 2):
                    s = _spaces(L, r + 3)
                    if L.low[s] == 97 or L.low[s] == 112:
                        t = s + 1
                        if L.low[t] == 109 and _bnd(L, t + 1):
                            return True
                        if L.low[t] == 46 and L.low[t + 1] == 109 and _bnd(L, t + 2):
                            return True
            # \b\d+\s+(minutes?|...)\s+ago\b
            r = _digits(L, p)
            s = _spaces(L, r)
            if s > r:
                m = _alts(L, s, A_UNITS, ends)
                for j in range(m):
                    e = ends[j]
                    f = _spaces(L, e)
                    if f > e:
                        m2 = _alts(L, f, A_AGO, ends2)
                        if m2 and _bnd(L, ends2[0]):
                            return True
            # \b\d{1,4}[/.-]\d{1,2}[/.-]\d{2,4}\b
            for k1 in range(1, 5):
                if not _is_digit(L, p + k1 - 1):
                    break
                q = p + k1
                c = L.low[q]
                if c != 47 and c != 46 and c != 45:
                    continue
                for k2 in range(1, 3):
                    if not _is_digit(L, q + k2):
                        break
                    q2 = q + k2 + 1
                    c = L.low[q2]
                    if c != 47 and c != 46 and c != 45:
                        continue
                    for k3 in range(1, 5):
                        if not _is_digit(L, q2 + k3):
                            break
                        if k3 >= 2 and _bnd(L, q2 + k3 + 1):
                            return True
        elif 97 <= L.low[p] <= 122:
            # \b(months)\.?\s+\d{1,2}\b
            if not _bnd(L, p):
                continue
            m = _alts(L, p, A_MONTHS, ends)
            for j in range(m):
                e = ends[j]
                for j2 in range(2):
                    q = e + j2
                    if j2 and L.low[e] != 46:
                        break
                    r = _spaces(L, q)
                    if r == q or not _is_digit(L, r):
                        continue
                    if _bnd(L, r + 1) or (_is_digit(L, r + 1) and _bnd(L, r + 2)):
                        return True
    return False


cdef bint _record_line(const Line* L) noexcept:
    """structure._RECORD_LINE.search(line) is not None."""
    cdef Py_ssize_t n = L.n, p, s
    cdef Py_ssize_t ends[MAX_ENDS]
    cdef int m, j
    # ^\s*(reply|report( abuse)?|...)\s*$
    m = _alts(L, _spaces(L, 0), A_RECORD_WHOLE, ends)
    for j in range(m):
        if _spaces(L, ends[j]) >= n:
            return True
    for p in range(n):
        if not 97 <= L.low[p] <= 122 or not _bnd(L, p):
            continue
        # \b(says|said|wrote)\s*:
        m = _alts(L, p, A_SAYS, ends)
        for j in range(m):
            if L.low[_spaces(L, ends[j])] == 58:
                return True
        # \breply\b
        if _alts(L, p, A_REPLY, ends) and _bnd(L, ends[0]):
            return True
    return False


cdef inline Py_ssize_t _lead(const Line* L) noexcept:
    """The end of ``^\W*``."""
    cdef Py_ssize_t p = 0
    while p < L.n and not L.cls[p] & CL_WORD:
        p += 1
    return p


cdef bint _count_tail(const Line* L, Py_ssize_t j) noexcept:
    """``\W*(\(\d+\))?\W*$`` from j."""
    cdef Py_ssize_t a, b, n = L.n
    while j < n and not L.cls[j] & CL_WORD:
        j += 1
    if j == n:
        return True
    a = j
    b = _digits(L, a)
    if b == a or a == 0 or L.low[a - 1] != 40 or b >= n or L.low[b] != 41:
        return False
    return _nonword_to_end(L, b + 1)


cdef bint _comment_head(const Line* L) noexcept:
    """structure._COMMENT_HEAD.search(line) is not None."""
    cdef Py_ssize_t p = _lead(L), s, s2, e, x
    cdef Py_ssize_t ends[MAX_ENDS]
    cdef Py_ssize_t ends2[MAX_ENDS]
    cdef Py_ssize_t ends3[MAX_ENDS]
    cdef Py_ssize_t starts[MAX_ENDS]
    cdef int m, m2, m3, j, j2, j3, ns
    if p >= L.n:
        return False
    # ^\W*(\d+|no|one|two|three)\s+(comments?|responses?|replies|thoughts|reactions|opinions)\b
    ns = _alts(L, p, A_NUMBERS, starts)
    if _is_digit(L, p):
        starts[ns] = _digits(L, p)
        ns += 1
    for j in range(ns):
        s = _spaces(L, starts[j])
        if s == starts[j]:
            continue
        m = _alts(L, s, A_RESPONSES, ends)
        for j2 in range(m):
            if _bnd(L, ends[j2]):
                return True
    # ^\W*(leave|post|add|write|submit)\s+(a|your|new)\s+(comment|reply|response)
    m = _alts(L, p, A_LEAVE, ends)
    for j in range(m):
        s = _spaces(L, ends[j])
        if s == ends[j]:
            continue
        m2 = _alts(L, s, A_A_YOUR_NEW, ends2)
        for j2 in range(m2):
            s2 = _spaces(L, ends2[j2])
            if s2 > ends2[j2] and _alts(L, s2, A_COMMENT_REPLY, ends3):
                return True
    # ^\W*(reader|user|your)?\s*(comments?|responses|discussion|replies)\W*(\(\d+\))?\W*$
    ns = _alts(L, p, A_READER, starts)
    starts[ns] = p
    ns += 1
    for j in range(ns):
        m = _alts(L, _spaces(L, starts[j]), A_COMMENTS_ALONE, ends)
        for j2 in range(m):
            if _count_tail(L, ends[j2]):
                return True
    # ^\W*(join|start) the (discussion|conversation)
    m = _alts(L, p, A_JOIN, ends)
    for j in range(m):
        if _alts(L, ends[j], A_THE, ends2) and _alts(L, ends2[0], A_DISCUSSION, ends3):
            return True
    # ^\W*what do you think\W*$
    if _alts(L, p, A_WHAT_THINK, ends) and _nonword_to_end(L, ends[0]):
        return True
    # ^\W*(\d+\s+)?trackbacks?\b
    starts[0] = p
    ns = 1
    if _is_digit(L, p):
        e = _digits(L, p)
        s = _spaces(L, e)
        if s > e:
            starts[1] = s
            ns = 2
    for j in range(ns):
        if _alts(L, starts[j], A_TRACKBACK, ends):
            e = ends[0]
            if _bnd(L, e) or (L.low[e] == 115 and _bnd(L, e + 1)):
                return True
    return False


cdef bint _related_head(const Line* L) noexcept:
    """structure._RELATED_HEAD.search(line) is not None."""
    cdef Py_ssize_t p = _lead(L), e, x, k, n = L.n
    cdef Py_ssize_t ends[MAX_ENDS]
    cdef Py_ssize_t ends2[MAX_ENDS]
    cdef Py_ssize_t ends3[MAX_ENDS]
    cdef Py_ssize_t ends4[MAX_ENDS]
    cdef int m, m2, m3, j, j2, j3
    if p >= n:
        return False
    # ^\W*(related|recommended|similar|popular|trending|most (read|popular|...))\b
    m = _alts(L, p, A_RELATED, ends)
    for j in range(m):
        if _bnd(L, ends[j]):
            return True
    if _alts(L, p, A_MOST, ends):
        m = _alts(L, ends[0], A_MOST_WHAT, ends2)
        for j in range(m):
            if _bnd(L, ends2[j]):
                return True
    # ^\W*(more|latest|recent|top)\b.{0,30}\b(posts|stories|...)\W*$
    m = _alts(L, p, A_MORE_LATEST, ends)
    for j in range(m):
        e = ends[j]
        if not _bnd(L, e):
            continue
        x = e
        while True:
            if _bnd(L, x):
                m2 = _alts(L, x, A_POSTS, ends2)
                for j2 in range(m2):
                    if _nonword_to_end(L, ends2[j2]):
                        return True
            if x >= n or x - e >= 30 or L.low[x] == 10:
                break
            x += 1
    # ^\W*more (from|on|in)\b
    if _alts(L, p, A_MORE_SP, ends):
        m = _alts(L, ends[0], A_FROM_ON_IN, ends2)
        for j in range(m):
            if _bnd(L, ends2[j]):
                return True
    # ^\W*(you (may|might) (also )?(like|enjoy|be interested))
    if _alts(L, p, A_YOU, ends):
        m = _alts(L, ends[0], A_MAY_MIGHT, ends2)
        for j in range(m):
            if _alts(L, ends2[j], A_LIKE, ends3):
                return True
            if _alts(L, ends2[j], A_ALSO_SP, ends3) and \
                    _alts(L, ends3[0], A_LIKE, ends4):
                return True
    # ^\W*(read|see) (more|also)\b and ^\W*(also|elsewhere) (on|in|from)\b
    m = _alts(L, p, A_READ_SEE, ends)
    for j in range(m):
        m2 = _alts(L, ends[j], A_MORE_ALSO, ends2)
        for j2 in range(m2):
            if _bnd(L, ends2[j2]):
                return True
    m = _alts(L, p, A_ALSO_ELSEWHERE, ends)
    for j in range(m):
        m2 = _alts(L, ends[j], A_ON_IN_FROM, ends2)
        for j2 in range(m2):
            if _bnd(L, ends2[j2]):
                return True
    # ^\W*around the web\W*$
    return _alts(L, p, A_AROUND, ends) > 0 and _nonword_to_end(L, ends[0])


def line_marks(str line) -> tuple:
    """(date line, record line, comment heading, related heading) of one line by the C
    matchers, None when the line goes to the Python patterns (fuzzing and tests)."""
    cdef Line L
    if len(line) > LINE_CAP or _line(&L, line) < 0:
        return None
    return (_date_line(&L), _record_line(&L), _comment_head(&L), _related_head(&L))


cdef int NGROUPS = 0
cdef int FIRST = 0               # first structure column of the matrix
cdef list STEMS = []             # bytes stems, longest first then alphabetical
cdef list STEM_BITS = []         # their group bits
cdef object PY_ELEMENT_STEMS = None   # the reference for names that are not ASCII
cdef dict GROUP_BIT = {}
cdef int C_DATE, C_RECORD, C_PARENT, C_GRAND, C_SHARE, C_AFTER_COMMENT, C_UNDER_COMMENT
cdef int C_UNDER_RELATED, C_AFTER_MAIN, C_CHARS_AFTER, C_MAIN_BEFORE, C_AFTER_H1, C_H1_OFFSET
cdef int NCOLS
# page-type columns (structure._page_type)
cdef int C_REC_PARENT, C_REC_BOX, C_IN_TOP, C_PRICE, C_PAGE_RECORDS, C_PAGE_RECORD_SHARE
cdef int C_PAGE_HEADINGS, C_PAGE_PRICES, C_PAGE_SECTIONS, C_PAGE_ARTICLES
cdef int MIN_RECORDS, PRICE_CHARS
cdef unicode CURRENCY
cdef int N_SHARES = 0            # the page_<group>_share columns: group bit and column
cdef int SHARE_BIT[32]
cdef int SHARE_COL[32]
cdef int SHORT_CHARS, HEAD_CHARS
cdef object DIGIT, DATE_LINE, RECORD_LINE, COMMENT_HEAD, RELATED_HEAD
cdef dict _ELEMENT_CACHE = {}
# the stems of two letters or more by their first two letters, each pair's in STEMS order,
# and the one-letter stem of each letter (-1: none; in STEMS order it comes after the
# longer stems of its letter, so a position tries its pair's stems, then its letter's)
cdef enum:
    MAX_STEMS = 256
    MAX_STEM_LEN = 32
cdef unsigned char STEM_TEXT[MAX_STEMS][MAX_STEM_LEN]
cdef int STEM_LEN[MAX_STEMS]
cdef int STEM_BIT[MAX_STEMS]
cdef int BY_PAIR[26 * 26][MAX_STEMS]
cdef int N_BY_PAIR[26 * 26]
cdef int SINGLE[26]
cdef int _CACHE_LIMIT = 32768


def configure(structure, int first) -> None:
    """Tables from the ``structure`` module; ``first`` is its first column in the matrix."""
    global NGROUPS, FIRST, STEMS, STEM_BITS, PY_ELEMENT_STEMS, GROUP_BIT, NCOLS
    global C_DATE, C_RECORD, C_PARENT, C_GRAND, C_SHARE, C_AFTER_COMMENT, C_UNDER_COMMENT
    global C_UNDER_RELATED, C_AFTER_MAIN, C_CHARS_AFTER, C_MAIN_BEFORE, C_AFTER_H1, C_H1_OFFSET
    global SHORT_CHARS, HEAD_CHARS
    global DIGIT, DATE_LINE, RECORD_LINE, COMMENT_HEAD, RELATED_HEAD
    groups = list(structure.STEM_GROUPS)
    NGROUPS = len(groups)
    FIRST = first
    idx = structure._IDX
    NCOLS = len(structure.NAMES)
    for g in groups:
        if idx["stem_any_" + g] != groups.index(g) or idx["stem_near_" + g] != NGROUPS + groups.index(g):
            raise ValueError("stem columns out of the expected order")
    GROUP_BIT = {g: 1 << i for i, g in enumerate(groups)}
    ordered = sorted(structure._STEM_GROUP, key=lambda w: (-len(w), w))
    STEMS = [w.encode("ascii") for w in ordered]
    STEM_BITS = [GROUP_BIT[structure._STEM_GROUP[w]] for w in ordered]
    PY_ELEMENT_STEMS = structure._element_stems
    if len(STEMS) > MAX_STEMS:
        raise ValueError("too many stems")
    cdef int k, c
    for c in range(26 * 26):
        N_BY_PAIR[c] = 0
    for c in range(26):
        SINGLE[c] = -1
    for k in range(len(STEMS)):
        w = STEMS[k]
        if not (0 < len(w) < MAX_STEM_LEN) or not all(97 <= b <= 122 for b in w):
            raise ValueError(f"stem {w!r} is not a short run of letters")
        STEM_LEN[k] = len(w)
        STEM_BIT[k] = STEM_BITS[k]
        for c in range(len(w)):
            STEM_TEXT[k][c] = w[c]
        if len(w) == 1:
            SINGLE[w[0] - 97] = k
            continue
        c = 26 * (w[0] - 97) + w[1] - 97
        BY_PAIR[c][N_BY_PAIR[c]] = k
        N_BY_PAIR[c] += 1
    C_DATE, C_RECORD = idx["date_line"], idx["record_line"]
    C_PARENT, C_GRAND = idx["parent_records"], idx["grandparent_records"]
    C_SHARE = idx["grandparent_record_share"]
    C_AFTER_COMMENT, C_UNDER_COMMENT = idx["after_comment_head"], idx["under_comment_head"]
    C_UNDER_RELATED, C_AFTER_MAIN = idx["under_related_head"], idx["after_main"]
    C_CHARS_AFTER = idx["chars_after_main"]
    C_MAIN_BEFORE, C_AFTER_H1, C_H1_OFFSET = idx["main_before"], idx["after_h1"], idx["h1_offset"]
    SHORT_CHARS, HEAD_CHARS = structure.SHORT_CHARS, structure.HEAD_CHARS
    global C_REC_PARENT, C_REC_BOX, C_IN_TOP, C_PRICE, C_PAGE_RECORDS, C_PAGE_RECORD_SHARE
    global C_PAGE_HEADINGS, C_PAGE_PRICES, C_PAGE_SECTIONS, C_PAGE_ARTICLES
    global MIN_RECORDS, PRICE_CHARS, CURRENCY, N_SHARES
    names = list(structure.NAMES)
    C_REC_PARENT = idx["rec_parent"]
    if names[C_REC_PARENT:C_REC_PARENT + 7] != ["rec_parent", "rec_grand", "rec_great",
                                                "rec_box_records", "rec_box_share",
                                                "in_top_records", "price_line"]:
        raise ValueError("record columns out of the expected order")
    C_REC_BOX, C_IN_TOP, C_PRICE = idx["rec_box_records"], idx["in_top_records"], idx["price_line"]
    C_PAGE_RECORDS, C_PAGE_RECORD_SHARE = idx["page_records"], idx["page_record_share"]
    C_PAGE_HEADINGS, C_PAGE_PRICES = idx["page_headings"], idx["page_prices"]
    C_PAGE_SECTIONS, C_PAGE_ARTICLES = idx["page_sections"], idx["page_articles"]
    MIN_RECORDS, PRICE_CHARS, CURRENCY = structure.MIN_RECORDS, structure.PRICE_CHARS, structure.CURRENCY
    N_SHARES = len(structure._SHARE_GROUPS)
    if N_SHARES > 32:
        raise ValueError("too many share groups")
    for k, g in enumerate(structure._SHARE_GROUPS):
        SHARE_BIT[k], SHARE_COL[k] = GROUP_BIT[g], idx[f"page_{g}_share"]
    DIGIT, DATE_LINE, RECORD_LINE = structure._DIGIT, structure._DATE_LINE, structure._RECORD_LINE
    COMMENT_HEAD, RELATED_HEAD = structure._COMMENT_HEAD, structure._RELATED_HEAD
    if SHORT_CHARS > LINE_CAP or HEAD_CHARS > LINE_CAP:
        raise ValueError("short lines longer than the C matchers read")
    for k, (kind, pattern) in enumerate((("date", DATE_LINE), ("record", RECORD_LINE),
                                         ("comment", COMMENT_HEAD), ("related", RELATED_HEAD))):
        C_ON[k] = zlib.crc32((pattern.pattern + str(pattern.flags)).encode()) == _PATTERN_CRC[kind]
    _ELEMENT_CACHE.clear()


cdef int _run_bits(const unsigned char* s, Py_ssize_t start, Py_ssize_t end):
    """Groups of the stems in one run of letters: left to right, the first (longest) stem
    in STEMS order at each position, then on after it (the reference's regex findall)."""
    cdef int bits = 0
    cdef Py_ssize_t p = start, k, m, nst = len(STEMS)
    cdef bytes w
    cdef const unsigned char* ws
    while p < end:
        for k in range(nst):
            w = <bytes>STEMS[k]
            m = len(w)
            ws = w
            if m <= end - p and memcmp(s + p, ws, m) == 0:
                bits |= <int>STEM_BITS[k]
                p += m
                break
        else:
            p += 1
    return bits


cdef inline unsigned char _low(unsigned char c) nogil:
    return c + 32 if 65 <= c <= 90 else c


cdef int _ascii_element_bits(const unsigned char* s, Py_ssize_t start, Py_ssize_t end) nogil:
    """``_element_bits`` of the ASCII element s[start:end], lower-cased on the fly."""
    cdef Py_ssize_t i = start, p, run_end, j
    cdef int bits = 0, k, kk, m, letter, pair
    cdef unsigned char c
    while i < end and s[i] != 46 and s[i] != 35:     # the tag: up to "." or "#"
        i += 1
    while i < end:
        c = _low(s[i])
        if c < 97 or c > 122:
            i += 1
            continue
        run_end = i
        while run_end < end and 97 <= _low(s[run_end]) <= 122:
            run_end += 1
        p = i
        while p < run_end:
            letter = _low(s[p]) - 97
            m = 0
            if p + 1 < run_end:     # the stems of the first two letters, longest first
                pair = 26 * letter + _low(s[p + 1]) - 97
                for kk in range(N_BY_PAIR[pair]):
                    k = BY_PAIR[pair][kk]
                    m = STEM_LEN[k]
                    if m > run_end - p:
                        m = 0
                        continue
                    j = 2
                    while j < m and _low(s[p + j]) == STEM_TEXT[k][j]:
                        j += 1
                    if j == m:
                        bits |= STEM_BIT[k]
                        break
                    m = 0
            if m == 0 and SINGLE[letter] >= 0:
                m = 1
                bits |= STEM_BIT[SINGLE[letter]]
            p += m if m else 1
        i = run_end
    return bits


cdef int _element_bits(str el) except -1:
    """Stem groups of one path element (tag, then .class / #id names)."""
    cached = _ELEMENT_CACHE.get(el)
    if cached is not None:
        return <int>cached
    cdef int bits = 0
    cdef Py_ssize_t i, n, start
    cdef bytes low
    cdef const unsigned char* s
    cdef unsigned char c
    if el.isascii():
        low = el.lower().encode("ascii")
        s = low
        n = len(low)
        i = 0
        while i < n and s[i] != 46 and s[i] != 35:     # the tag: up to "." or "#"
            i += 1
        while i < n:
            c = s[i]
            if 97 <= c <= 122:
                start = i
                while i < n and 97 <= s[i] <= 122:
                    i += 1
                bits |= _run_bits(s, start, i)
            else:
                i += 1
    else:  # Unicode lower-casing may make letters of other characters: the reference
        for g in PY_ELEMENT_STEMS(el):
            bits |= <int>GROUP_BIT[g]
    if len(_ELEMENT_CACHE) >= _CACHE_LIMIT:
        _ELEMENT_CACHE.clear()
    _ELEMENT_CACHE[el] = bits
    return bits


def fill(double[:, ::1] X, list paths, list plains, int in_main_col) -> None:
    """Write ``structure.columns(paths, plains, X[:, in_main_col])`` into X[:, FIRST:]."""
    cdef Py_ssize_t n = len(paths), i, j, k, u, g, pos, cut
    cdef Py_ssize_t last = -1, comment_at = -1, at, end
    cdef int any_bits, near_bits, own, prev
    cdef double m, cum_last, cum
    cdef str q, t, box, a
    for i in range(n):
        for k in range(NCOLS):
            X[i, FIRST + k] = 0.0
    if n == 0:
        return
    # distinct paths in order of appearance
    cdef dict distinct = {}
    cdef list uniq = []
    cdef Py_ssize_t[::1] inverse = np.empty(n, dtype=np.intp)
    for i in range(n):
        q = <str>paths[i]
        got = distinct.get(q)
        if got is None:
            u = len(uniq)
            distinct[q] = u
            uniq.append(q)
        else:
            u = <Py_ssize_t>got
        inverse[i] = u
    cdef Py_ssize_t nu = len(uniq)
    cdef int[::1] any_of = np.empty(nu, dtype=np.intc)
    cdef int[::1] near_of = np.empty(nu, dtype=np.intc)
    cdef double[::1] count = np.zeros(nu)
    cdef double[::1] marked = np.zeros(nu)
    # ASCII paths are read in place; the elements a path shares with the path before it
    # (same text up to and with their closing ">") keep that path's stems
    cdef const unsigned char* pd
    cdef const unsigned char* last_pd = NULL
    cdef Py_ssize_t plen, e0, last_len = 0, same, ne, last_ne = 0, longest = 1
    for u in range(nu):
        if len(<str>uniq[u]) > longest:
            longest = len(<str>uniq[u])
    cdef Py_ssize_t[::1] el_end = np.empty(longest + 1, dtype=np.intp)
    cdef int[::1] el_own = np.empty(longest + 1, dtype=np.intc)
    cdef int[::1] el_any = np.empty(longest + 1, dtype=np.intc)
    # containers of the page-type columns: every path prefix ending before a ">" or at the
    # end, numbered in order of first appearance (_page_type); a shared element keeps its id
    cdef Py_ssize_t[::1] el_pid = np.empty(longest + 1, dtype=np.intp)
    cdef Py_ssize_t shared, e
    boxes = _Boxes(uniq)
    for u in range(nu):
        q = <str>uniq[u]
        any_bits = 0
        prev = 0
        own = 0
        boxes.chain_start[u] = boxes.n_chain
        if PyUnicode_IS_ASCII(q):
            pd = <const unsigned char*>PyUnicode_DATA(q)
            plen = len(q)
            same = 0
            if last_pd != NULL:
                while same < plen and same < last_len and pd[same] == last_pd[same]:
                    same += 1
            ne = 0
            while ne < last_ne and el_end[ne] < same:   # element ne and its ">" are shared
                ne += 1
            e0 = 0
            if ne:
                e0 = el_end[ne - 1] + 1
                own = el_own[ne - 1]
                prev = el_own[ne - 2] if ne >= 2 else 0
                any_bits = el_any[ne - 1]
            shared = ne
            for k in range(e0, plen + 1):
                if k == plen or pd[k] == 62:      # ">" ends an element
                    prev = own
                    own = _ascii_element_bits(pd, e0, k)
                    any_bits |= own
                    el_end[ne] = k
                    el_own[ne] = own
                    el_any[ne] = any_bits
                    ne += 1
                    e0 = k + 1
            for e in range(shared, ne):
                el_pid[e] = boxes.node(q, el_end[e - 1] + 1 if e else 0, el_end[e],
                                       el_pid[e - 1] if e else -1, u)
            for e in range(1, ne):
                boxes.add(el_pid[e])
            last_pd, last_len, last_ne = pd, plen, ne
        else:
            for el in q.split(">"):
                prev = own
                own = _element_bits(<str>el)
                any_bits |= own
            e0, k = 0, -1
            while True:
                e = q.find(">", e0)
                k = boxes.node(q, e0, e if e >= 0 else len(q), k, u)
                if e0:
                    boxes.add(k)
                if e < 0:
                    break
                e0 = e + 1
        any_of[u] = any_bits
        near_of[u] = own | prev
    boxes.chain_start[nu] = boxes.n_chain
    # short lines: date and record marks
    cdef double[::1] date = np.zeros(n)
    cdef double[::1] record = np.zeros(n)
    cdef Line line
    cdef bint in_c
    for i in range(n):
        t = <str>plains[i]
        if len(t) <= SHORT_CHARS:
            in_c = _line(&line, t) == 0
            if in_c and C_ON[SET_DATE]:
                date[i] = _date_line(&line)
            elif DIGIT.search(t) is not None and DATE_LINE.search(t) is not None:
                date[i] = 1.0
            if in_c and C_ON[SET_RECORD]:
                record[i] = _record_line(&line)
            elif RECORD_LINE.search(t) is not None:
                record[i] = 1.0
    for i in range(n):
        u = inverse[i]
        any_bits, near_bits = any_of[u], near_of[u]
        for g in range(NGROUPS):
            if any_bits & (1 << g):
                X[i, FIRST + g] = 1.0
            if near_bits & (1 << g):
                X[i, FIRST + NGROUPS + g] = 1.0
        X[i, FIRST + C_DATE] = date[i]
        X[i, FIRST + C_RECORD] = record[i]
        count[u] += 1.0
        marked[u] += date[i] + record[i]
    _records(X, inverse, count, marked, boxes)
    _after_headings(X, paths, plains, uniq, inverse)
    # after the last paragraph of the main container
    for i in range(n):
        if X[i, in_main_col] > 0:
            last = i
    if last >= 0:
        cum_last = 0.0
        for i in range(last + 1):
            cum_last += len(<str>plains[i])
        after = np.zeros(n)
        cdef_after(after, plains, cum_last, n)
        logs = np.log1p(after)
        for i in range(n):
            if i > last:
                X[i, FIRST + C_AFTER_MAIN] = 1.0
        _put(X, FIRST + C_CHARS_AFTER, logs, n)
        _main_before(X, plains, n, in_main_col)
    else:
        for i in range(n):
            X[i, FIRST + C_MAIN_BEFORE] = -1.0
    _h1_position(X, uniq, inverse)
    _page_type(X, plains, uniq, inverse, any_of, boxes)


cdef void _main_before(double[:, ::1] X, list plains, Py_ssize_t n, int in_main_col):
    """Share of the main container's characters before each paragraph (whole numbers:
    the sums are exact, as numpy's cumulative sums in the reference)."""
    cdef double total = 0.0, cum = 0.0, ln
    cdef Py_ssize_t i
    for i in range(n):
        if X[i, in_main_col] > 0:
            total += len(<str>plains[i])
    for i in range(n):
        if total > 0:
            X[i, FIRST + C_MAIN_BEFORE] = cum / total
        if X[i, in_main_col] > 0:
            cum += len(<str>plains[i])


cdef int _heading_level(str path):
    """1-6 when the path's last element is a heading h1-h6 (its tag, before any "." or "#",
    lower-cased: only "h" or "H" and a digit, as lower-casing never shortens a string), else 0."""
    cdef Py_ssize_t start = path.rfind(">") + 1, n = len(path)
    cdef int kind = PyUnicode_KIND(path)
    cdef void* data = PyUnicode_DATA(path)
    cdef Py_UCS4 c, digit
    if n - start < 2:
        return 0
    c = PyUnicode_READ(kind, data, start)
    digit = PyUnicode_READ(kind, data, start + 1)
    if (c != 104 and c != 72) or digit < 49 or digit > 54:
        return 0
    if n - start > 2:
        c = PyUnicode_READ(kind, data, start + 2)
        if c != 46 and c != 35:
            return 0
    return <int>digit - 48


cdef inline bint _is_h1(str path):
    return _heading_level(path) == 1


cdef void _h1_position(double[:, ::1] X, list uniq, Py_ssize_t[::1] inverse):
    """1 from the first h1 paragraph on, 0 before it (-1 on pages without one), and the
    signed log distance to it in paragraphs."""
    cdef Py_ssize_t n = inverse.shape[0], i, first = -1, u, nu = len(uniq)
    cdef unsigned char[::1] h1 = np.zeros(nu, dtype=np.uint8)
    for u in range(nu):
        h1[u] = _is_h1(<str>uniq[u])
    for i in range(n):
        if h1[inverse[i]]:
            first = i
            break
    if first < 0:
        for i in range(n):
            X[i, FIRST + C_AFTER_H1] = -1.0
        return
    for i in range(n):
        if i >= first:
            X[i, FIRST + C_AFTER_H1] = 1.0
        X[i, FIRST + C_H1_OFFSET] = copysign(log1p(<double>(i - first if i >= first else first - i)),
                                             <double>(i - first))


cdef void cdef_after(double[::1] after, list plains, double cum_last, Py_ssize_t n):
    cdef double cum = 0.0, ln, b
    cdef Py_ssize_t i
    for i in range(n):
        ln = len(<str>plains[i])
        cum += ln
        b = (cum - cum_last) - ln
        after[i] = b if b > 0.0 else 0.0


cdef void _put(double[:, ::1] X, Py_ssize_t col, double[::1] v, Py_ssize_t n):
    cdef Py_ssize_t i
    for i in range(n):
        X[i, col] = v[i]


cdef int _records(double[:, ::1] X, Py_ssize_t[::1] inverse, double[::1] count,
                  double[::1] marked, _Boxes boxes) except -1:
    """Paragraphs and record lines inside each ancestor element of a path (its boxes but
    the path's own: the prefixes ending before a '>', all but the outermost), then each
    paragraph's parent and grandparent sums (whole numbers: exact in any order)."""
    cdef Py_ssize_t u, j, g, i, nu = count.shape[0], n = inverse.shape[0], nbox = boxes.n_boxes
    cdef Py_ssize_t* chain = boxes.chain
    cdef Py_ssize_t* start = boxes.chain_start
    cdef double m
    cdef bint some = False
    cdef double* lines = <double*>calloc(2 * nbox + 6 * nu + 1, sizeof(double))
    if lines == NULL:
        raise MemoryError()
    cdef double* paras = lines + nbox
    cdef double* R = paras + nbox       # (nu, 3) row-major
    try:
        for u in range(nu):
            m = marked[u]
            if m == 0.0:
                continue
            for j in range(start[u], start[u + 1] - 1):
                lines[chain[j]] += m
                some = True
        if not some:    # no record lines: every column is log1p(0) = 0 and 0 / paras = 0
            return 0
        for u in range(nu):
            for j in range(start[u], start[u + 1] - 1):
                paras[chain[j]] += count[u]
        for u in range(nu):
            j = start[u + 1] - start[u]
            if j >= 2:
                R[3 * u] = log1p(lines[chain[start[u + 1] - 2]])
            if j >= 3:
                g = chain[start[u + 1] - 3]
                if lines[g] != 0.0:
                    R[3 * u + 1] = log1p(lines[g])
                    R[3 * u + 2] = lines[g] / paras[g]
        for i in range(n):
            u = inverse[i]
            X[i, FIRST + C_PARENT] = R[3 * u]
            X[i, FIRST + C_GRAND] = R[3 * u + 1]
            X[i, FIRST + C_SHARE] = R[3 * u + 2]
    finally:
        free(lines)
    return 0


cdef str _container(str path):
    cdef Py_ssize_t p = path.rfind(">")
    if p < 0:
        return ""
    p = path.rfind(">", 0, p)
    if p <= 0:
        return ""
    return path[:p] + ">"


cdef _after_headings(double[:, ::1] X, list paths, list plains, list uniq,
                     Py_ssize_t[::1] inverse):
    cdef Py_ssize_t n = len(paths), i, k, at, end, comment_at = -1, nu = len(uniq)
    cdef list related = []
    cdef str t, box
    cdef Line line
    cdef bint in_c
    for i in range(n):
        t = <str>plains[i]
        if len(t) > HEAD_CHARS:
            continue
        in_c = _line(&line, t) == 0
        if comment_at < 0 and (_comment_head(&line) if in_c and C_ON[SET_COMMENT]
                               else COMMENT_HEAD.search(t) is not None):
            comment_at = i
        elif (_related_head(&line) if in_c and C_ON[SET_RELATED]
              else RELATED_HEAD.search(t) is not None):
            related.append(i)
    if comment_at < 0 and not related:
        return
    cdef unsigned char[::1] inside = np.empty(nu, dtype=np.uint8)
    if comment_at >= 0:
        _inside(inside, uniq, _container(<str>paths[comment_at]))
        for i in range(comment_at + 1, n):
            X[i, FIRST + C_AFTER_COMMENT] = 1.0
            X[i, FIRST + C_UNDER_COMMENT] = 1.0 if inside[inverse[i]] else 0.0
    for k in range(len(related)):
        at = <Py_ssize_t>related[k]
        end = <Py_ssize_t>related[k + 1] if k + 1 < len(related) else n
        _inside(inside, uniq, _container(<str>paths[at]))
        for i in range(at + 1, end):
            X[i, FIRST + C_UNDER_RELATED] = 1.0 if inside[inverse[i]] else 0.0


cdef void _inside(unsigned char[::1] inside, list uniq, str box):
    cdef Py_ssize_t u
    for u in range(len(uniq)):
        inside[u] = 1 if (<str>uniq[u]).startswith(box) else 0


cdef bint _tag_is(str path, Py_ssize_t start, Py_ssize_t n, str name):
    """The tag of the element path[start:n] (up to "." or "#") is ``name`` (lower-case
    ASCII), in ASCII capitals or not."""
    cdef Py_ssize_t m = len(name), i
    cdef int kind = PyUnicode_KIND(path)
    cdef void* data = PyUnicode_DATA(path)
    cdef unsigned int c
    if n - start < m:
        return False
    for i in range(m):
        c = <unsigned int>PyUnicode_READ(kind, data, start + i)
        if 65 <= c <= 90:
            c += 32
        if c != <unsigned int>ord(name[i]):
            return False
    if n - start == m:
        return True
    c = PyUnicode_READ(kind, data, start + m)
    return c == 46 or c == 35


cdef inline bint _is_heading(str path):
    return _heading_level(path) > 0


cdef bint _is_price_line(str t):
    """structure.is_price_line."""
    cdef Py_ssize_t n = len(t), i, j, d
    cdef int kind
    cdef void* data
    cdef Py_UCS4 c
    if n > PRICE_CHARS:
        return False
    kind = PyUnicode_KIND(t)
    data = PyUnicode_DATA(t)
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if c < 36 or (c > 36 and c < 0xA3) or CURRENCY.find(chr(c)) < 0:
            continue
        for d in (-1, 1):
            j = i + d
            if 0 <= j < n and PyUnicode_READ(kind, data, j) == 32:
                j += d
            if 0 <= j < n and 48 <= PyUnicode_READ(kind, data, j) <= 57:
                return True
    return False


cdef class _Boxes:
    """The containers of a page's distinct paths (structure._page_type). Every path prefix
    ending before a ">" or at the end is a node, interned by (parent node, element text) in
    an open-addressing table; the nodes below the root element are the containers ("boxes"),
    numbered in order of first appearance, and each distinct path has its chain of boxes,
    outermost first."""
    cdef list uniq
    cdef Py_ssize_t* mem              # one block for the arrays below
    cdef Py_ssize_t* slots            # node id + 1, 0 for an empty slot
    cdef Py_ssize_t mask, n_nodes, n_boxes, n_chain
    cdef Py_ssize_t* n_parent
    cdef Py_ssize_t* n_u
    cdef Py_ssize_t* n_start
    cdef Py_ssize_t* n_len
    cdef Py_ssize_t* n_box
    cdef Py_ssize_t* n_hash           # the node's hash, as bits
    cdef Py_ssize_t* first            # box -> the distinct path it was first seen in
    cdef Py_ssize_t* chain_start
    cdef Py_ssize_t* chain
    cdef int sections, articles

    def __cinit__(self, list uniq):
        cdef Py_ssize_t bound = 1, cap = 64, u, nu = len(uniq)
        for u in range(nu):
            bound += (<str>uniq[u]).count(">") + 1
        while cap < 2 * bound:
            cap *= 2
        self.uniq = uniq
        self.mem = <Py_ssize_t*>calloc(cap + 8 * bound + nu + 1, sizeof(Py_ssize_t))
        if self.mem == NULL:
            raise MemoryError()
        self.slots = self.mem
        self.mask = cap - 1
        self.n_parent = self.mem + cap
        self.n_u = self.n_parent + bound
        self.n_start = self.n_u + bound
        self.n_len = self.n_start + bound
        self.n_box = self.n_len + bound
        self.n_hash = self.n_box + bound
        self.first = self.n_hash + bound
        self.chain = self.first + bound
        self.chain_start = self.chain + bound
        self.n_nodes = self.n_boxes = self.n_chain = 0
        self.sections = self.articles = 0

    def __dealloc__(self):
        free(self.mem)

    cdef Py_ssize_t node(self, str q, Py_ssize_t start, Py_ssize_t end, Py_ssize_t parent,
                         Py_ssize_t u) except -2:
        """The node of element q[start:end] under node ``parent`` (-1: the root element),
        new when not seen; a new node below the root is the next box."""
        cdef int kind = PyUnicode_KIND(q), okind
        cdef void* data = PyUnicode_DATA(q)
        cdef void* odata
        cdef uint64_t h = 1469598103934665603ULL
        cdef Py_ssize_t i, k, slot, ln = end - start
        cdef str other
        h = (h ^ <uint64_t>(parent + 1)) * 1099511628211ULL
        for i in range(start, end):
            h = (h ^ <uint64_t>PyUnicode_READ(kind, data, i)) * 1099511628211ULL
        slot = <Py_ssize_t>(h & <uint64_t>self.mask)
        while self.slots[slot]:
            k = self.slots[slot] - 1
            if <uint64_t>self.n_hash[k] == h and self.n_parent[k] == parent and self.n_len[k] == ln:
                other = <str>self.uniq[self.n_u[k]]
                okind = PyUnicode_KIND(other)
                odata = PyUnicode_DATA(other)
                i = 0
                while i < ln and PyUnicode_READ(okind, odata, self.n_start[k] + i) \
                        == PyUnicode_READ(kind, data, start + i):
                    i += 1
                if i == ln:
                    return k
            slot = (slot + 1) & self.mask
        k = self.n_nodes
        self.n_nodes += 1
        self.slots[slot] = k + 1
        self.n_hash[k], self.n_parent[k], self.n_len[k] = <Py_ssize_t>h, parent, ln
        self.n_u[k], self.n_start[k] = u, start
        self.n_box[k] = -1
        if parent >= 0:
            self.n_box[k] = self.n_boxes
            self.first[self.n_boxes] = u
            self.n_boxes += 1
            if _tag_is(q, start, end, "section"):
                self.sections += 1
            if _tag_is(q, start, end, "article"):
                self.articles += 1
        return k

    cdef inline void add(self, Py_ssize_t k):
        """Box of node k onto the current path's chain (k below the root)."""
        self.chain[self.n_chain] = self.n_box[k]
        self.n_chain += 1


cdef _page_type(double[:, ::1] X, list plains, list uniq, Py_ssize_t[::1] inverse,
                int[::1] any_of, _Boxes boxes):
    """structure._page_type: record lists (containers whose first path comes back), price
    lines and the page-level type signals."""
    cdef Py_ssize_t n = inverse.shape[0], nu = len(uniq), nbox = boxes.n_boxes
    cdef double* mem = <double*>calloc(n + 10 * nu + 4 * nbox + 1, sizeof(double))
    if mem == NULL:
        raise MemoryError()
    try:
        _page_type_into(X, plains, uniq, inverse, any_of, boxes, mem)
    finally:
        free(mem)


cdef int _page_type_into(double[:, ::1] X, list plains, list uniq, Py_ssize_t[::1] inverse,
                         int[::1] any_of, _Boxes boxes, double* mem) except -1:
    cdef Py_ssize_t n = inverse.shape[0], nu = len(uniq), i, u, k, j
    cdef Py_ssize_t top = -1, start, end, chain_len
    cdef double total = 0.0, top_share = 0.0, headings = 0.0, prices = 0.0, v, r
    cdef int sections = boxes.sections, articles = boxes.articles
    cdef Py_ssize_t* chain_start = boxes.chain_start
    cdef Py_ssize_t* chain = boxes.chain
    cdef Py_ssize_t* first = boxes.first
    cdef Py_ssize_t nbox = boxes.n_boxes
    # one zeroed block: per paragraph, per distinct path, per box
    cdef double* lens = mem
    cdef double* count = lens + n
    cdef double* chars = count + nu
    cdef double* last = chars + nu          # index of the last paragraph (whole numbers)
    cdef double* R = last + nu              # (nu, 6) row-major
    cdef double* box = R + 6 * nu
    cdef double* tail = box + nbox
    cdef double* records = tail + nbox
    cdef double* valid = records + nbox
    for i in range(n):
        lens[i] = len(<str>plains[i])
        total += lens[i]
        u = inverse[i]
        count[u] += 1.0
        chars[u] += lens[i]
        last[u] = i
    if total == 0.0:
        total = 1.0
    for u in range(nu):         # in order of the distinct paths: the reference's sums
        for j in range(chain_start[u], chain_start[u + 1]):
            box[chain[j]] += chars[u]
    for i in range(n):
        u = inverse[i]
        for j in range(chain_start[u], chain_start[u + 1]):
            k = chain[j]
            if i >= last[first[k]]:
                tail[k] += lens[i]
    for k in range(nbox):
        records[k] = count[first[k]]
        valid[k] = 1.0 if records[k] >= MIN_RECORDS and box[k] > 0 and 2 * tail[k] <= box[k] else 0.0
        if valid[k] > 0 and box[k] / total > top_share:
            top, top_share = k, box[k] / total
    for u in range(nu):
        start, end = chain_start[u], chain_start[u + 1]
        chain_len = end - start
        for j in range(2, 5):
            if chain_len >= j:
                R[6 * u + j - 2] = log(records[chain[end - j]])
        for j in range(end - 2, start - 1, -1):
            k = chain[j]
            if valid[k] > 0:
                R[6 * u + 3] = log(records[k])
                R[6 * u + 4] = box[k] / total
                break
        if top >= 0:
            for j in range(start, end):
                if chain[j] == top:
                    R[6 * u + 5] = 1.0
                    break
        if _is_heading(<str>uniq[u]):
            headings += count[u]
    cdef double share[32]
    cdef int g
    for g in range(N_SHARES):
        v = 0.0
        for u in range(nu):
            if any_of[u] & SHARE_BIT[g]:
                v += chars[u]
        share[g] = v / total
    for i in range(n):
        u = inverse[i]
        for j in range(6):
            X[i, FIRST + C_REC_PARENT + j] = R[6 * u + j]
        if _is_price_line(<str>plains[i]):
            X[i, FIRST + C_PRICE] = 1.0
            prices += 1.0
    r = log(records[top]) if top >= 0 else 0.0
    headings = log1p(headings)
    prices = log1p(prices)
    cdef double secs = log1p(<double>sections), arts = log1p(<double>articles)
    for i in range(n):
        X[i, FIRST + C_PAGE_RECORDS] = r
        X[i, FIRST + C_PAGE_RECORD_SHARE] = top_share
        X[i, FIRST + C_PAGE_HEADINGS] = headings
        X[i, FIRST + C_PAGE_PRICES] = prices
        X[i, FIRST + C_PAGE_SECTIONS] = secs
        X[i, FIRST + C_PAGE_ARTICLES] = arts
        for g in range(N_SHARES):
            X[i, FIRST + SHARE_COL[g]] = share[g]
    return 0
