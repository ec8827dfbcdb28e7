# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The ``sieve`` feature matrix and tree scores of ``warclake.tasks.extract.boilerplate`` in C.

``matrix(paragraphs, lang)`` gives exactly ``features.python_matrix``'s array and
``margin(...)`` exactly ``model.Forest.margin``'s scores: the same rules step by step, in
C loops over the page's code points, its distinct paths and its paragraphs, with the same
IEEE operations in the same order (sums of whole character counts are exact in any order;
sums of fractions run in paragraph order, as ``np.bincount`` does; the trees' leaves are
added in numpy's pairwise order). Where the reference calls numpy's ``log``/``log1p``, this
module calls the same numpy functions on arrays of the same type (their SIMD loops need
not round as libm does); where it calls ``math.log``/``math.log1p``, libm.

Every table comes from the Python modules (``configure`` and ``lang_config``): the group
words, tag lists, column names, character classes and jusText's parameters have one
source. Adding a feature column: define it in ``features.NAMES`` and ``python_matrix``,
then compute it here and name it in ``_computed_names``; until both agree, ``configure``
or the import-time check refuses this module and the Python path runs.
"""
from libc.math cimport log, log1p, sqrt, fabs
from libc.stdint cimport uint16_t, uint32_t, uint64_t, int64_t, int32_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcmp, memcpy, memset

import numpy as np

cdef extern from "Python.h":
    object PyUnicode_FromKindAndData(int kind, const void *buffer, Py_ssize_t size)
    int PyUnicode_KIND(object o)
    void *PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index)
    Py_UCS4 PyUnicode_MAX_CHAR_VALUE(object o)
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch)
    Py_UCS4 Py_UNICODE_TOLOWER(Py_UCS4 ch)
    int PyUnicode_4BYTE_KIND

# Character class bits (text_columns' values, checked in configure).
cdef enum:
    B_SPACE = 1
    B_ALNUM = 2
    B_CJK = 4
    B_PUNCT = 8
    B_DIGIT = 16
    B_UPPER = 32
    B_SEP = 64
    B_TITLE = 128
    B_TERM = 256
    B_CLOSER = 512
    B_END = 1024        # END_CHARS (ends_with_punct), added here

# jusText classes
cdef enum:
    J_BAD = 0
    J_SHORT = 1
    J_NEAR = 2
    J_GOOD = 3

cdef uint16_t TABLE[0x10000]
# str.lower() of each BMP code point where it is one code point whatever the context; 0 for
# U+0130 (two code points) and U+03A3 (final sigma depends on the neighbours)
cdef uint16_t LOWER[0x10000]
cdef bint CONFIGURED = False
cdef int NCOLS = 0
cdef int N_TEXT = 11
cdef int TEXT_IX[11]
cdef int C_LINK, C_STOP, C_NTAGS, C_MARKUP, C_DEPTH, C_HEADING, C_POS_INDEX, C_POS_CHARS
cdef int C_DOC_CHARS, C_DOC_PARAS, C_DUP, C_SP_SHARE, C_SP_COUNT, C_PAR_SHARE, C_GRA_SHARE
cdef int C_SP_STOP, C_SP_LINK, C_HAS_CLASS, C_HAS_ID
cdef int C_CF[4]
cdef int C_JT_FINAL, C_IN_MAIN, C_MAIN_SHARE, C_BEST_ANC, C_DENSITY, C_BTE, C_DIST, C_CHARS_TO
cdef int N_GROUPS = 0
cdef int GRP_ANY[64]
cdef int GRP_NEAR[64]
# known tags: bit k of a tag mask; per bit, the anc_ column (or -1) and the tag_ column (or -1)
cdef int N_TAGS = 0
cdef int TAG_ANC[64]
cdef int TAG_OWN[64]
cdef uint64_t HEADING_BITS = 0, SELECT_BIT = 0
cdef double MARKUP_PER_TAG = 30.0
cdef int64_t MARKUP_PER_TAG_INT = 30
# a paragraph's start tags are read as at most text.N_TAGS_MAX (2**32), at least 0
cdef int64_t N_TAGS_MAX = 4294967296
cdef Py_ssize_t DENSITY_MIN = 60
cdef double DENSITY_BASE = 0.5
cdef int N_CTX = 0
cdef int CTX_SRC[32]
cdef int N_OFFSETS = 0
cdef int OFFSET[8]
cdef int CTX_OFF_COL[8][32]
cdef int N_WINDOWS = 0
cdef int WINDOW[8]
cdef int CTX_WIN_COL[8][32]
cdef dict TAG_BIT = {}           # known tag name -> bit
cdef object STDEV = None         # statistics.stdev: the exact value on a close call
cdef object NP_LOG = None
cdef object NP_LOG1P = None

# Group words: a small open-addressing table of lower-case ASCII words -> group mask.
cdef enum:
    WORD_SLOTS = 1024
    WORD_MAX = 31
cdef char WORD_KEY[WORD_SLOTS][WORD_MAX + 1]
cdef unsigned char WORD_LEN[WORD_SLOTS]
cdef uint64_t WORD_MASK[WORD_SLOTS]


cdef inline uint32_t _rd(int kind, const void *d, Py_ssize_t i) noexcept nogil:
    """PyUnicode_READ, inlined."""
    if kind == 1:
        return (<const unsigned char *> d)[i]
    if kind == 2:
        return (<const uint16_t *> d)[i]
    return (<const uint32_t *> d)[i]


cdef inline uint64_t _fnv(uint64_t h, uint64_t c) noexcept nogil:
    return (h ^ c) * <uint64_t> 1099511628211ULL


cdef inline uint64_t _word_hash(const char *w, int n) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL
    cdef int i
    for i in range(n):
        h = _fnv(h, <unsigned char> w[i])
    return h


cdef uint64_t _word_groups(const char *w, int n) noexcept nogil:
    cdef uint64_t s
    if n > WORD_MAX:
        return 0
    s = _word_hash(w, n) & (WORD_SLOTS - 1)
    while WORD_LEN[s]:
        if WORD_LEN[s] == n and memcmp(WORD_KEY[s], w, n) == 0:
            return WORD_MASK[s]
        s = (s + 1) & (WORD_SLOTS - 1)
    return 0


cdef list _computed_names(list groups, list ancestors, list owns, list ctx, list offsets, list windows):
    """The column names this module computes, for the given tables."""
    base = ["log_len", "log_words", "link_density", "stop_density", "log_ntags", "markup_density",
            "depth", "is_heading", "punct_ratio", "digit_ratio", "upper_ratio", "titlecase_ratio",
            "sentence_ends", "ends_with_punct", "sep_ratio", "avg_word_len", "n_lines",
            "pos_index", "pos_chars", "log_doc_chars", "log_doc_paras", "dup_count",
            "same_path_share", "same_path_count", "parent_share", "grandparent_share",
            "same_path_stop", "same_path_link", "path_has_class", "path_has_id",
            "jt_cf_bad", "jt_cf_short", "jt_cf_near", "jt_cf_good", "jt_final_good",
            "in_main", "main_share", "best_ancestor",
            "density_good", "bte_good", "dist_jt_good", "chars_to_jt_good"]
    base += [f"grp_any_{g}" for g in groups] + [f"grp_near_{g}" for g in groups]
    base += [f"anc_{t}" for t in ancestors] + [f"tag_{t}" for t in owns]
    base += [f"{c}@{o:+d}" for o in offsets for c in ctx]
    base += [f"{c}~{w}" for w in windows for c in ctx]
    return base


def configure(tuple names, dict path_groups, tuple ancestor_tags, tuple own_tags,
              headings, tuple text_cols, tuple context_cols, tuple offsets, tuple windows,
              text_table, dict text_bits, str end_chars, double markup_per_tag,
              Py_ssize_t density_min, double density_base, stdev, np_log, np_log1p):
    """Tables and names from features, text_columns and density (one source of truth)."""
    global CONFIGURED, NCOLS, N_GROUPS, N_TAGS, HEADING_BITS, SELECT_BIT, MARKUP_PER_TAG
    global DENSITY_MIN, DENSITY_BASE, MARKUP_PER_TAG_INT, N_CTX, N_OFFSETS, N_WINDOWS, TAG_BIT, STDEV, NP_LOG, NP_LOG1P
    global C_LINK, C_STOP, C_NTAGS, C_MARKUP, C_DEPTH, C_HEADING, C_POS_INDEX, C_POS_CHARS
    global C_DOC_CHARS, C_DOC_PARAS, C_DUP, C_SP_SHARE, C_SP_COUNT, C_PAR_SHARE, C_GRA_SHARE
    global C_SP_STOP, C_SP_LINK, C_HAS_CLASS, C_HAS_ID
    global C_JT_FINAL, C_IN_MAIN, C_MAIN_SHARE, C_BEST_ANC, C_DENSITY, C_BTE, C_DIST, C_CHARS_TO
    CONFIGURED = False
    groups = list(path_groups)
    expected = _computed_names(groups, list(ancestor_tags), list(own_tags), list(context_cols),
                               list(offsets), list(windows))
    if sorted(expected) != sorted(names) or len(set(names)) != len(names):
        raise ValueError("features.NAMES holds columns this module does not compute")
    expected_bits = {"SPACE": B_SPACE, "ALNUM": B_ALNUM, "CJK": B_CJK, "PUNCT": B_PUNCT,
                     "DIGIT": B_DIGIT, "UPPER": B_UPPER, "SEP": B_SEP, "TITLE": B_TITLE,
                     "TERM": B_TERM, "CLOSER": B_CLOSER}
    if text_bits != expected_bits:
        raise ValueError("text_columns' class bits differ")
    if len(groups) > 64 or len(context_cols) > 32 or len(offsets) > 8 or len(windows) > 8:
        raise ValueError("more groups, context columns, offsets or windows than the tables hold")
    col = {n: i for i, n in enumerate(names)}
    NCOLS = len(names)
    cdef Py_ssize_t i, k
    tb = list(text_table)
    if len(tb) != 0x10000:
        raise ValueError("text_columns' table is not of the BMP")
    for i in range(0x10000):
        TABLE[i] = <uint16_t> (<int> tb[i] & 0x3FF)
    for i in range(0x10000):
        LOWER[i] = <uint16_t> Py_UNICODE_TOLOWER(<Py_UCS4> i)
    LOWER[0x130] = 0
    LOWER[0x3A3] = 0
    for ch in end_chars:
        if ord(ch) >= 0x10000:
            raise ValueError("an END_CHARS character outside the BMP")
        TABLE[ord(ch)] |= B_END
    for i, name in enumerate(text_cols):
        TEXT_IX[i] = col[name]
    if len(text_cols) != N_TEXT:
        raise ValueError("TEXT_COLS changed")
    C_LINK, C_STOP, C_NTAGS, C_MARKUP = col["link_density"], col["stop_density"], col["log_ntags"], col["markup_density"]
    C_DEPTH, C_HEADING = col["depth"], col["is_heading"]
    C_POS_INDEX, C_POS_CHARS = col["pos_index"], col["pos_chars"]
    C_DOC_CHARS, C_DOC_PARAS, C_DUP = col["log_doc_chars"], col["log_doc_paras"], col["dup_count"]
    C_SP_SHARE, C_SP_COUNT = col["same_path_share"], col["same_path_count"]
    C_PAR_SHARE, C_GRA_SHARE = col["parent_share"], col["grandparent_share"]
    C_SP_STOP, C_SP_LINK = col["same_path_stop"], col["same_path_link"]
    C_HAS_CLASS, C_HAS_ID = col["path_has_class"], col["path_has_id"]
    C_CF[J_BAD], C_CF[J_SHORT] = col["jt_cf_bad"], col["jt_cf_short"]
    C_CF[J_NEAR], C_CF[J_GOOD] = col["jt_cf_near"], col["jt_cf_good"]
    C_JT_FINAL, C_IN_MAIN = col["jt_final_good"], col["in_main"]
    C_MAIN_SHARE, C_BEST_ANC = col["main_share"], col["best_ancestor"]
    C_DENSITY, C_BTE = col["density_good"], col["bte_good"]
    C_DIST, C_CHARS_TO = col["dist_jt_good"], col["chars_to_jt_good"]
    # group words
    N_GROUPS = len(groups)
    memset(WORD_LEN, 0, sizeof(WORD_LEN))
    cdef bytes wb
    cdef uint64_t s
    n_words = 0
    for k, g in enumerate(groups):
        GRP_ANY[k] = col[f"grp_any_{g}"]
        GRP_NEAR[k] = col[f"grp_near_{g}"]
        for w in path_groups[g]:
            if not w.isascii() or w != w.lower() or not w.isalpha() or not 0 < len(w) <= WORD_MAX:
                raise ValueError(f"group word {w!r} is not a short lower-case ASCII word")
            wb = w.encode("ascii")
            s = _word_hash(wb, len(wb)) & (WORD_SLOTS - 1)
            while WORD_LEN[s] and not (WORD_LEN[s] == len(wb) and memcmp(WORD_KEY[s], <char *> wb, len(wb)) == 0):
                s = (s + 1) & (WORD_SLOTS - 1)
            if not WORD_LEN[s]:
                n_words += 1
                if n_words > WORD_SLOTS // 2:
                    raise ValueError("too many group words")
                memset(WORD_KEY[s], 0, WORD_MAX + 1)
                memcpy_ascii(WORD_KEY[s], wb)
                WORD_LEN[s] = <unsigned char> len(wb)
                WORD_MASK[s] = 0
            WORD_MASK[s] |= (<uint64_t> 1) << k
    # known tags
    heads = sorted(headings)
    known = sorted(set(ancestor_tags) | set(own_tags) | set(heads) | {"select"})
    if len(known) > 64:
        raise ValueError("more known tags than a tag mask holds")
    TAG_BIT = {}
    HEADING_BITS = 0
    N_TAGS = len(known)
    for k, t in enumerate(known):
        TAG_BIT[t] = k
        TAG_ANC[k] = col[f"anc_{t}"] if t in ancestor_tags else -1
        own = "h" if t in heads else t
        TAG_OWN[k] = col[f"tag_{own}"] if own in own_tags else -1
        if t in heads:
            HEADING_BITS |= (<uint64_t> 1) << k
    SELECT_BIT = (<uint64_t> 1) << TAG_BIT["select"]
    MARKUP_PER_TAG, DENSITY_MIN, DENSITY_BASE = markup_per_tag, density_min, density_base
    MARKUP_PER_TAG_INT = <int64_t> markup_per_tag
    if MARKUP_PER_TAG_INT != markup_per_tag:
        raise ValueError("MARKUP_CHARS_PER_TAG is not a whole number")
    N_CTX = len(context_cols)
    for k, c in enumerate(context_cols):
        CTX_SRC[k] = col[c]
    N_OFFSETS = len(offsets)
    for i, o in enumerate(offsets):
        OFFSET[i] = o
        for k, c in enumerate(context_cols):
            CTX_OFF_COL[i][k] = col[f"{c}@{o:+d}"]
    N_WINDOWS = len(windows)
    for i, w in enumerate(windows):
        WINDOW[i] = w
        for k, c in enumerate(context_cols):
            CTX_WIN_COL[i][k] = col[f"{c}~{w}"]
    STDEV, NP_LOG, NP_LOG1P = stdev, np_log, np_log1p
    CONFIGURED = True


def lower_table():
    """The BMP lower-case table (for the tests: equal to str.lower where it is not 0)."""
    return [LOWER[i] for i in range(0x10000)]


cdef void memcpy_ascii(char *dst, bytes src):
    cdef Py_ssize_t i
    cdef const char *p = src
    for i in range(len(src)):
        dst[i] = p[i]


# ---- stop words of one language: an open-addressing table of code-point strings ----

cdef class LangConfig:
    """What the features need of a language: its stoplist as a table, jusText's parameters."""
    cdef uint32_t *chars          # the stop words' code points, one after another
    cdef int64_t *off             # word k is chars[off[k]:off[k + 1]]
    cdef uint64_t *hashes
    cdef int32_t *slots           # word index + 1, 0 for an empty slot
    cdef uint64_t mask
    cdef Py_ssize_t n_words
    cdef unsigned char *func      # CJK: function characters of the BMP, one flag each
    cdef readonly bint cjk, has_stops
    cdef double max_link, stop_low, stop_high
    cdef int64_t len_low, len_high, heading_dist
    cdef bint no_headings

    def __cinit__(self):
        self.chars = NULL
        self.off = NULL
        self.hashes = NULL
        self.slots = NULL
        self.func = NULL

    def __dealloc__(self):
        free(self.chars)
        free(self.off)
        free(self.hashes)
        free(self.slots)
        free(self.func)

    def __init__(self, stops, bint cjk, params):
        cdef Py_ssize_t total = 0, k = 0, j, size
        cdef uint64_t h, s
        self.cjk = cjk
        self.has_stops = bool(stops)
        (self.max_link, self.len_low, self.len_high, self.stop_low, self.stop_high,
         self.heading_dist, self.no_headings) = params
        words = sorted(stops)
        if cjk:
            self.func = <unsigned char *> calloc(0x10000, 1)
            if self.func == NULL:
                raise MemoryError()
            for w in words:
                if len(w) == 1 and ord(w) < 0x10000:
                    self.func[ord(w)] = 1
            return
        for w in words:
            total += len(w)
        self.n_words = len(words)
        size = 16
        while size < 2 * self.n_words + 2:
            size *= 2
        self.mask = size - 1
        self.chars = <uint32_t *> malloc((total + 1) * sizeof(uint32_t))
        self.off = <int64_t *> malloc((self.n_words + 1) * sizeof(int64_t))
        self.hashes = <uint64_t *> malloc((self.n_words + 1) * sizeof(uint64_t))
        self.slots = <int32_t *> calloc(size, sizeof(int32_t))
        if not (self.chars and self.off and self.hashes and self.slots):
            raise MemoryError()
        total = 0
        for k, w in enumerate(words):
            self.off[k] = total
            h = 1469598103934665603ULL
            for ch in w:
                self.chars[total] = ord(ch)
                h = _fnv(h, ord(ch))
                total += 1
            self.hashes[k] = h
            s = h & self.mask
            while self.slots[s]:
                s = (s + 1) & self.mask
            self.slots[s] = <int32_t> (k + 1)
        self.off[self.n_words] = total

    cdef bint contains(self, const uint32_t *w, Py_ssize_t n, uint64_t h) noexcept nogil:
        cdef uint64_t s = h & self.mask
        cdef int32_t k
        while True:
            k = self.slots[s]
            if k == 0:
                return False
            k -= 1
            if (self.hashes[k] == h and self.off[k + 1] - self.off[k] == n
                    and memcmp(self.chars + self.off[k], w, n * sizeof(uint32_t)) == 0):
                return True
            s = (s + 1) & self.mask


cdef dict LANGS = {}
LANG_FACTORY = None   # set by the chooser: lang -> (stoplist, is CJK, jusText parameters)


cdef LangConfig _lang(str lang):
    cfg = LANGS.get(lang)
    if cfg is None:
        stops, cjk, params = LANG_FACTORY(lang)
        cfg = LangConfig(stops, cjk, params)
        LANGS[lang] = cfg
    return <LangConfig> cfg


# ---- character helpers ----

cdef inline uint16_t _cls(uint32_t c) noexcept:
    if c < 0x10000:
        return TABLE[c]
    return B_ALNUM if Py_UNICODE_ISALNUM(c) else 0


cdef inline bint _alnum(uint32_t c) noexcept:
    if c < 0x10000:
        return (TABLE[c] & B_ALNUM) != 0
    return Py_UNICODE_ISALNUM(c)


cdef inline bint _word_char(uint32_t c) noexcept:
    """[\\w'’.-] of Python's re."""
    return (c == 0x5F or c == 0x27 or c == 0x2019 or c == 0x2E or c == 0x2D) or _alnum(c)


# ---- growable scratch arrays (freed at the end of each call) ----

cdef struct Buf:
    void *p
    Py_ssize_t cap


cdef int _grow(Buf *b, Py_ssize_t need, size_t item) except -1:
    cdef Py_ssize_t cap
    cdef void *q
    if need <= b.cap:
        return 0
    cap = b.cap * 2 if b.cap else 64
    while cap < need:
        cap *= 2
    q = realloc(b.p, cap * item)
    if q == NULL:
        raise MemoryError()
    b.p = q
    b.cap = cap
    return 0


cdef Py_ssize_t _copy_str(object text, Buf *b, Py_ssize_t at) except -1:
    """Append the code points of a str to b (as uint32) at ``at``; its length."""
    cdef Py_ssize_t L = PyUnicode_GET_LENGTH(text), j
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    _grow(b, at + L + 1, sizeof(uint32_t))
    cdef uint32_t *dst = (<uint32_t *> b.p) + at
    cdef const unsigned char *d1
    cdef const uint16_t *d2
    if kind == 1:
        d1 = <const unsigned char *> data
        for j in range(L):
            dst[j] = d1[j]
    elif kind == 2:
        d2 = <const uint16_t *> data
        for j in range(L):
            dst[j] = d2[j]
    else:
        memcpy(dst, data, L * sizeof(uint32_t))
    return L


# ---- stop-word density of one paragraph ----

cdef double _stop_density(LangConfig cfg, const uint32_t *t, Py_ssize_t L, Buf *low) except -1.0:
    cdef Py_ssize_t i, j, start, last, n_words = 0, hits = 0, m, a, kk
    cdef uint32_t c, maxc = 0
    cdef uint32_t *w
    cdef uint64_t h
    cdef bint apos = False, in_stops
    cdef int kind
    cdef void *data
    cdef Py_ssize_t n_cjk = 0, n_func = 0
    if cfg.cjk:
        for i in range(L):
            c = t[i]
            if c < 0x10000 and (TABLE[c] & B_CJK):
                n_cjk += 1
                n_func += cfg.func[c]
        if n_cjk == 0:
            return 0.0
        return <double> n_func / <double> n_cjk
    if not cfg.has_stops or L == 0:
        return 0.0
    _grow(low, L + 1, sizeof(uint32_t))
    w = <uint32_t *> low.p
    for i in range(L):
        c = t[i]
        if c == 0x27 or c == 0x2019:
            apos = True
        if c >= 0x10000 or LOWER[c] == 0:
            maxc = 1   # lowered by str.lower() below
        else:
            w[i] = LOWER[c]
    m = L
    if maxc:
        lowered = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, t, L).lower()
        m = PyUnicode_GET_LENGTH(lowered)
        _grow(low, m + 1, sizeof(uint32_t))
        w = <uint32_t *> low.p
        kind = PyUnicode_KIND(lowered)
        data = PyUnicode_DATA(lowered)
        for i in range(m):
            w[i] = PyUnicode_READ(kind, data, i)
    i = 0
    while i < m:
        if not _alnum(w[i]):
            i += 1
            continue
        start = last = i
        j = i + 1
        while j < m and _word_char(w[j]):
            if _alnum(w[j]):
                last = j
            j += 1
        n_words += 1
        h = 1469598103934665603ULL
        for kk in range(start, last + 1):
            h = _fnv(h, w[kk])
        in_stops = cfg.contains(w + start, last + 1 - start, <uint64_t> h)
        if in_stops:
            hits += 1
        elif apos:
            # an elided article glued to its word: l'homme, dell'anno (text._is_stop)
            a = -1
            for kk in range(start, last + 1):
                if w[kk] == 0x27:
                    a = kk
                    break
            if a < 0:
                for kk in range(start, last + 1):
                    if w[kk] == 0x2019:
                        a = kk
                        break
            if a > start and a < last:
                _grow(low, m + (a - start) + 2, sizeof(uint32_t))
                w = <uint32_t *> low.p
                h = 1469598103934665603ULL
                for kk in range(a - start):
                    c = w[start + kk]
                    if c == 0x2019:
                        c = 0x27
                    w[m + kk] = c
                    h = _fnv(h, c)
                w[m + (a - start)] = 0x27
                h = _fnv(h, 0x27)
                if cfg.contains(w + m, a - start + 1, h):
                    hits += 1
        i = j
    if n_words == 0:
        return 0.0
    return <double> hits / <double> n_words


# ---- the feature matrix ----

cdef struct PathInfo:
    int64_t prefix       # prefix id of the whole path
    int64_t parent       # prefix id of the parent, -1 for none (or the empty string)
    int64_t grand        # prefix id of the grandparent, -1 for none (or the empty string)
    int64_t elem         # element id of the last element
    int64_t parent_elem  # element id of the element before it, -1 for none
    bint has_class, has_id


cdef struct Elem:
    Py_ssize_t start, length
    uint64_t hash
    uint64_t tag          # bit of its (lower-cased) tag among the known tags, 0 for another
    uint64_t groups


cdef struct Prefix:
    int64_t parent, elem
    int64_t depth
    uint64_t any_groups, tags


cdef class _Page:
    """Scratch memory of one call (freed with the object, whatever happens)."""
    cdef Buf codes, off, links, ntags, strip_len, low, pcodes, elems, eslots, prefixes, pslots
    cdef Buf dslots, dhash, info

    def __dealloc__(self):
        free(self.codes.p); free(self.off.p); free(self.links.p); free(self.ntags.p)
        free(self.strip_len.p); free(self.low.p); free(self.pcodes.p); free(self.elems.p)
        free(self.eslots.p); free(self.prefixes.p); free(self.pslots.p); free(self.dslots.p)
        free(self.dhash.p); free(self.info.p)


cdef int _tag_of(const uint32_t *el, Py_ssize_t n, uint64_t *out) except -1:
    """The known-tag bit of an element's tag part, lower-cased as str.lower() does."""
    cdef Py_ssize_t i
    cdef bint ascii = True
    for i in range(n):
        if el[i] >= 0x80:
            ascii = False
            break
    if n == 0 or n > 40:
        out[0] = 0
        return 0
    if ascii:
        name = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, el, n)
        bit = TAG_BIT.get(name.lower() if not name.islower() else name)
    else:
        bit = TAG_BIT.get(PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, el, n).lower())
    out[0] = 0 if bit is None else (<uint64_t> 1) << <int> bit
    return 0


cdef uint64_t _groups_of(const uint32_t *s, Py_ssize_t n) noexcept:
    """Groups named by the sub-words of [A-Z]?[a-z]+|[A-Z]+(?![a-z]) in s (ASCII)."""
    cdef Py_ssize_t i = 0, j, m, k
    cdef uint64_t g = 0
    cdef char word[WORD_MAX + 1]
    cdef uint32_t c
    while i < n:
        c = s[i]
        if 0x41 <= c <= 0x5A:
            if i + 1 < n and 0x61 <= s[i + 1] <= 0x7A:
                j = i + 1
                while j < n and 0x61 <= s[j] <= 0x7A:
                    j += 1
            else:
                j = i
                while j < n and 0x41 <= s[j] <= 0x5A:
                    j += 1
                if j < n and 0x61 <= s[j] <= 0x7A:
                    j -= 1      # the last capital starts the next word
        elif 0x61 <= c <= 0x7A:
            j = i
            while j < n and 0x61 <= s[j] <= 0x7A:
                j += 1
        else:
            i += 1
            continue
        m = j - i
        if m <= WORD_MAX:
            for k in range(m):
                c = s[i + k]
                word[k] = <char> (c + 0x20 if c <= 0x5A else c)
            g |= _word_groups(word, <int> m)
        i = j
    return g


def matrix(list paragraphs, str lang):
    """``features.python_matrix(paragraphs, lang)``, computed in C."""
    return _matrix(paragraphs, lang, NCOLS, None)[0]


def matrix_parts(list paragraphs, str lang, Py_ssize_t width):
    """(X, paths, plains): ``matrix``'s columns in the first columns of an (n, width) array
    whose other columns are 0 (the structure columns' room: no copy into a wider matrix),
    the paragraphs' paths and their plain texts (``Paragraph.plain``: the text itself when
    it has no link marker)."""
    plains = []
    X, paths = _matrix(paragraphs, lang, width if width > NCOLS else NCOLS, plains)
    return X, paths, plains


cdef tuple _matrix(list paragraphs, str lang, Py_ssize_t width, list plains):
    """(the matrix, the paragraphs' paths); the plain texts appended to ``plains`` unless None."""
    if not CONFIGURED:
        raise RuntimeError("sieve_features is not configured")
    cdef Py_ssize_t n = len(paragraphs)
    X = np.zeros((n, width), dtype=np.float64)
    if n == 0:
        return X, []
    cdef double[:, ::1] x = X
    cdef LangConfig cfg = _lang(lang)
    cdef _Page pg = _Page()
    cdef Py_ssize_t i, j, k, L, total_chars = 0, pos, a, b
    cdef int kind
    cdef void *data
    cdef uint32_t c
    cdef bint in_link
    cdef int64_t nl
    # ---- texts: plain code points, link characters, n_tags ----
    _grow(&pg.off, n + 1, sizeof(int64_t))
    _grow(&pg.links, n, sizeof(int64_t))
    _grow(&pg.ntags, n, sizeof(int64_t))
    cdef int64_t *off = <int64_t *> pg.off.p
    cdef int64_t *links
    cdef int64_t *ntags
    cdef uint32_t *codes
    paths = [None] * n
    off[0] = 0
    for i in range(n):
        p = paragraphs[i]
        text = p.text
        paths[i] = p.path
        if type(text) is not str:
            raise TypeError("a paragraph's text is not a str")
        L = _copy_str(text, &pg.codes, total_chars)
        codes = <uint32_t *> pg.codes.p
        links = <int64_t *> pg.links.p
        ntags = <int64_t *> pg.ntags.p
        in_link = False
        nl = 0
        pos = total_chars
        for j in range(total_chars, total_chars + L):   # drop the link markers in place
            c = codes[j]
            if c == 2:
                if in_link:
                    nl += 1
                in_link = True
                continue
            if c == 3:
                in_link = False
                continue
            if in_link:
                nl += 1
            codes[pos] = c
            pos += 1
        if plains is not None:
            plains.append(text if pos - total_chars == L else
                          PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, codes + total_chars, pos - total_chars))
        total_chars = pos
        off[i + 1] = pos
        links[i] = nl
        try:
            nl = p.n_tags
        except OverflowError:       # beyond 64 bits: the clamp below decides by the sign
            nl = N_TAGS_MAX if p.n_tags > 0 else 0
        ntags[i] = 0 if nl < 0 else (N_TAGS_MAX if nl > N_TAGS_MAX else nl)
    codes = <uint32_t *> pg.codes.p
    links = <int64_t *> pg.links.p
    ntags = <int64_t *> pg.ntags.p
    # ---- text columns, stripped lengths, word units ----
    units_a = np.zeros(n, dtype=np.int64)
    strip_a = np.zeros(n, dtype=np.int64)
    cls_a = np.zeros(n, dtype=np.int8)         # bit 0: holds ©
    cdef int64_t[::1] units = units_a
    cdef int64_t[::1] strip_len = strip_a
    cdef signed char[::1] flags = cls_a
    cdef int64_t n_tok, n_title, runs, n_cjk, n_sent, n_punct, n_digit, n_upper, n_sep, n_nl
    cdef uint16_t f, fprev
    cdef bint prev_space, in_run, run_alnum, ends
    cdef Py_ssize_t s0, s1, q
    cdef double Ld, tokd
    for i in range(n):
        s0 = off[i]
        s1 = off[i + 1]
        L = s1 - s0
        if L == 0:
            continue
        n_tok = n_title = runs = n_cjk = n_sent = n_punct = n_digit = n_upper = n_sep = n_nl = 0
        prev_space = True
        in_run = False
        run_alnum = False
        for j in range(s0, s1):
            c = codes[j]
            f = _cls(c)
            if c == 0xA9:
                flags[i] |= 1
            if c == 10:
                n_nl += 1
            if not (f & B_SPACE) and prev_space:
                n_tok += 1
            if (f & B_TITLE) and prev_space:
                n_title += 1
            if f & (B_SPACE | B_CJK):
                if in_run and run_alnum:
                    runs += 1
                in_run = False
                run_alnum = False
            else:
                in_run = True
                if f & B_ALNUM:
                    run_alnum = True
            if f & B_CJK:
                n_cjk += 1
            if f & B_PUNCT:
                n_punct += 1
            if f & B_DIGIT:
                n_digit += 1
            if f & B_UPPER:
                n_upper += 1
            if f & B_SEP:
                n_sep += 1
            if f & B_TERM:
                q = j + 1
                while q < s1 and (_cls(codes[q]) & B_CLOSER):
                    q += 1
                if q >= s1 or (_cls(codes[q]) & B_SPACE):
                    n_sent += 1
            prev_space = (f & B_SPACE) != 0
        if in_run and run_alnum:
            runs += 1
        units[i] = runs + (n_cjk + 1) // 2
        # stripped length (str.strip) and the last non-space character
        a = s0
        while a < s1 and (_cls(codes[a]) & B_SPACE):
            a += 1
        b = s1
        while b > a and (_cls(codes[b - 1]) & B_SPACE):
            b -= 1
        strip_len[i] = b - a
        ends = True if b == a else (_cls(codes[b - 1]) & B_END) != 0   # '' in END_CHARS
        Ld = <double> L
        tokd = <double> n_tok
        x[i, TEXT_IX[0]] = log1p(Ld)
        x[i, TEXT_IX[1]] = log1p(<double> units[i])
        x[i, TEXT_IX[2]] = n_punct / Ld
        x[i, TEXT_IX[3]] = n_digit / Ld
        x[i, TEXT_IX[4]] = n_upper / Ld
        x[i, TEXT_IX[5]] = n_title / tokd if n_tok > 0 else 0.0
        x[i, TEXT_IX[6]] = log1p(<double> n_sent)
        x[i, TEXT_IX[7]] = 1.0 if ends else 0.0
        x[i, TEXT_IX[8]] = n_sep / Ld
        x[i, TEXT_IX[9]] = Ld / tokd if n_tok > 0 else 0.0
        x[i, TEXT_IX[10]] = log1p(<double> n_nl)
    # ---- stop densities, link densities ----
    stops_a = np.zeros(n, dtype=np.float64)
    lens_a = np.zeros(n, dtype=np.float64)
    cdef double[::1] stops = stops_a
    cdef double[::1] lens = lens_a
    cdef double total = 0.0
    for i in range(n):
        L = off[i + 1] - off[i]
        lens[i] = <double> L
        total += <double> L
        stops[i] = _stop_density(cfg, codes + off[i], L, &pg.low)
        x[i, C_STOP] = stops[i]
        x[i, C_LINK] = (<double> links[i]) / lens[i] if L > 0 else 0.0
    if total == 0.0:
        total = 1.0
    # ---- distinct paths, their elements and prefixes ----
    distinct = {}
    inv_a = np.empty(n, dtype=np.intp)
    cdef Py_ssize_t[::1] inverse = inv_a
    dlist = []
    for i in range(n):
        q_obj = paths[i]
        k = distinct.setdefault(q_obj, len(distinct))
        if k == len(dlist):
            if type(q_obj) is not str:
                raise TypeError("a paragraph's path is not a str")
            dlist.append(q_obj)
        inverse[i] = k
    cdef Py_ssize_t m = len(dlist)
    _grow(&pg.info, m, sizeof(PathInfo))
    cdef PathInfo *info = <PathInfo *> pg.info.p
    cdef Py_ssize_t n_elems = 0, n_pref = 0, eslot_cap = 0, pslot_cap = 0
    cdef Py_ssize_t pc_len = 0, plen, e0, tl, es
    cdef uint64_t h, hs
    cdef int64_t *eslots
    cdef int64_t *pslots
    cdef Elem *elems
    cdef Prefix *prefs
    cdef uint32_t *pcodes
    cdef int64_t parent_pid, eid, pid, prev_eid, depth
    cdef bint found
    # hash tables sized for the worst case (every element distinct)
    cdef Py_ssize_t el_bound = 0     # elements of all distinct paths: their '>' and one
    poff_a = np.empty(m + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] poff = poff_a
    poff[0] = 0
    for k in range(m):      # every distinct path's code points, one after another
        pc_len += _copy_str(dlist[k], &pg.pcodes, pc_len)
        poff[k + 1] = pc_len
    pcodes = <uint32_t *> pg.pcodes.p
    el_bound = m
    for j in range(pc_len):
        if pcodes[j] == 0x3E:
            el_bound += 1
    eslot_cap = 64
    while eslot_cap < 2 * el_bound + 2:
        eslot_cap *= 2
    pslot_cap = eslot_cap
    _grow(&pg.eslots, eslot_cap, sizeof(int64_t))
    _grow(&pg.pslots, pslot_cap, sizeof(int64_t))
    _grow(&pg.elems, el_bound + 1, sizeof(Elem))
    _grow(&pg.prefixes, el_bound + 1, sizeof(Prefix))
    eslots = <int64_t *> pg.eslots.p
    pslots = <int64_t *> pg.pslots.p
    elems = <Elem *> pg.elems.p
    prefs = <Prefix *> pg.prefixes.p
    memset(eslots, 0xFF, eslot_cap * sizeof(int64_t))
    memset(pslots, 0xFF, pslot_cap * sizeof(int64_t))
    for k in range(m):
        info[k].has_class = False
        info[k].has_id = False
        parent_pid = -1
        prev_eid = -1
        info[k].parent = -1
        info[k].grand = -1
        info[k].parent_elem = -1
        depth = 0
        j = poff[k]
        plen = poff[k + 1]
        while True:
            # one element: code points up to the next '>' or the end
            h = 1469598103934665603ULL
            e0 = j
            c = 0
            while j < plen:
                c = pcodes[j]
                if c == 0x3E:
                    break
                if c == 0x2E:
                    info[k].has_class = True
                elif c == 0x23:
                    info[k].has_id = True
                h = _fnv(h, c)
                j += 1
            tl = j - e0
            j += 1      # past the '>'
            # intern the element
            hs = h & (eslot_cap - 1)
            found = False
            while eslots[hs] >= 0:
                eid = eslots[hs]
                if (elems[eid].hash == h and elems[eid].length == tl
                        and memcmp(pcodes + elems[eid].start, pcodes + e0, tl * sizeof(uint32_t)) == 0):
                    found = True
                    break
                hs = (hs + 1) & (eslot_cap - 1)
            if not found:
                eid = n_elems
                n_elems += 1
                eslots[hs] = eid
                elems[eid].start = e0
                elems[eid].length = tl
                elems[eid].hash = h
                es = 0
                while es < tl and pcodes[e0 + es] != 0x2E and pcodes[e0 + es] != 0x23:
                    es += 1
                _tag_of(pcodes + e0, es, &elems[eid].tag)
                elems[eid].groups = _groups_of(pcodes + e0 + es, tl - es) if es < tl else 0
            # intern the prefix (parent prefix, element)
            depth += 1
            h = _fnv(_fnv(1469598103934665603ULL, <uint64_t> (parent_pid + 1)), <uint64_t> eid)
            hs = h & (pslot_cap - 1)
            found = False
            while pslots[hs] >= 0:
                pid = pslots[hs]
                if prefs[pid].parent == parent_pid and prefs[pid].elem == eid:
                    found = True
                    break
                hs = (hs + 1) & (pslot_cap - 1)
            if not found:
                pid = n_pref
                n_pref += 1
                pslots[hs] = pid
                prefs[pid].parent = parent_pid
                prefs[pid].elem = eid
                prefs[pid].depth = depth
                if parent_pid >= 0:
                    prefs[pid].any_groups = prefs[parent_pid].any_groups | elems[eid].groups
                    prefs[pid].tags = prefs[parent_pid].tags | elems[eid].tag
                else:
                    prefs[pid].any_groups = elems[eid].groups
                    prefs[pid].tags = elems[eid].tag
            if c != 0x3E:   # the last element
                info[k].prefix = pid
                info[k].elem = eid
                info[k].parent_elem = prev_eid
                break
            parent_pid = pid
            prev_eid = eid
        # parent and grandparent, unless the empty string (a depth-1 prefix of an empty element)
        pid = info[k].prefix
        a = prefs[pid].parent
        if a >= 0 and not (prefs[a].depth == 1 and elems[prefs[a].elem].length == 0):
            info[k].parent = a
        if a >= 0:
            b = prefs[a].parent
            if b >= 0 and not (prefs[b].depth == 1 and elems[prefs[b].elem].length == 0):
                info[k].grand = b
    # ---- path columns, per distinct path, spread to the paragraphs ----
    cdef uint64_t anc, any_g, near_g, bit, own_tags
    cdef int t
    cdef Prefix *pr
    head_a = np.zeros(m, dtype=np.int8)
    sel_a = np.zeros(m, dtype=np.int8)
    cdef signed char[::1] path_head = head_a
    cdef signed char[::1] path_sel = sel_a
    for i in range(n):
        k = inverse[i]
        pr = &prefs[info[k].prefix]
        any_g = pr.any_groups
        near_g = elems[info[k].elem].groups
        if info[k].parent_elem >= 0:
            near_g |= elems[info[k].parent_elem].groups
        for t in range(N_GROUPS):
            if (any_g >> t) & 1:
                x[i, GRP_ANY[t]] = 1.0
            if (near_g >> t) & 1:
                x[i, GRP_NEAR[t]] = 1.0
        anc = prefs[pr.parent].tags if pr.parent >= 0 else 0
        for t in range(N_TAGS):
            if ((anc >> t) & 1) and TAG_ANC[t] >= 0:
                x[i, TAG_ANC[t]] = 1.0
        own_tags = elems[info[k].elem].tag
        for t in range(N_TAGS):
            if ((own_tags >> t) & 1) and TAG_OWN[t] >= 0:
                x[i, TAG_OWN[t]] = 1.0
        if pr.tags & HEADING_BITS:
            x[i, C_HEADING] = 1.0
            path_head[k] = 1
        if pr.tags & SELECT_BIT:
            path_sel[k] = 1
        if info[k].has_class:
            x[i, C_HAS_CLASS] = 1.0
        if info[k].has_id:
            x[i, C_HAS_ID] = 1.0
        x[i, C_DEPTH] = <double> pr.depth
    # ---- jusText: context-free classes, headings, context-sensitive pass ----
    cf_a = np.zeros(n, dtype=np.int8)
    fin_a = np.zeros(n, dtype=np.int8)
    pre_a = np.zeros(n, dtype=np.int8)
    cdef signed char[::1] cf = cf_a
    cdef signed char[::1] pre = pre_a
    cdef signed char[::1] fin = fin_a
    cdef int64_t length
    cdef double dens
    cdef bint heads_on = not cfg.no_headings
    for i in range(n):
        length = strip_len[i]
        dens = (<double> links[i]) / (<double> length) if length > 0 else 0.0
        if (flags[i] & 1) or path_sel[inverse[i]]:
            cf[i] = J_BAD
        elif dens > cfg.max_link:
            cf[i] = J_BAD
        elif length < cfg.len_low:
            cf[i] = J_BAD if links[i] > 0 else J_SHORT
        elif not cfg.has_stops:
            cf[i] = J_GOOD if length > cfg.len_high else J_NEAR
        elif stops[i] > cfg.stop_high:
            cf[i] = J_GOOD if length > cfg.len_high else J_NEAR
        elif stops[i] > cfg.stop_low:
            cf[i] = J_NEAR
        else:
            cf[i] = J_BAD
        pre[i] = cf[i]
    for i in range(n):
        if heads_on and path_head[inverse[i]] and cf[i] == J_SHORT and _good_follows(i, pre, lens, cfg.heading_dist):
            pre[i] = J_NEAR
    _context_sensitive(pre, fin, n)
    for i in range(n):
        if (heads_on and path_head[inverse[i]] and fin[i] == J_BAD and cf[i] != J_BAD
                and _good_follows(i, fin, lens, cfg.heading_dist)):
            fin[i] = J_GOOD
    for i in range(n):
        x[i, C_CF[cf[i]]] = 1.0
        if fin[i] == J_GOOD:
            x[i, C_JT_FINAL] = 1.0
    # ---- markup density, density filter, BTE ----
    ntags_a = np.empty(n, dtype=np.float64)
    cdef double[::1] ntags_f = ntags_a
    for i in range(n):
        ntags_f[i] = <double> ntags[i]
        x[i, C_MARKUP] = (lens[i] + 1) / (lens[i] + ntags_f[i] * MARKUP_PER_TAG + 1)
    _density_column(x, n, strip_len, ntags)
    _bte_column(x, n, units, ntags)
    # ---- positions, page sizes, duplicates ----
    cum_a = np.empty(n + 1, dtype=np.float64)
    cdef double[::1] cum = cum_a
    cum[0] = 0.0
    for i in range(n):
        cum[i + 1] = cum[i] + lens[i]
    cdef double pos_div = <double> (n - 1 if n > 1 else 1)
    cdef double log_chars = log1p(total), log_paras = log1p(<double> n)
    for i in range(n):
        x[i, C_POS_INDEX] = i / pos_div
        x[i, C_POS_CHARS] = cum[i] / total
        x[i, C_DOC_CHARS] = log_chars
        x[i, C_DOC_PARAS] = log_paras
    _dup_column(x, n, codes, off, &pg.dslots, &pg.dhash)
    # ---- per-path sums ----
    chars_a = np.zeros(m, dtype=np.float64)
    count_a = np.zeros(m, dtype=np.intp)
    stop_a = np.zeros(m, dtype=np.float64)
    link_a = np.zeros(m, dtype=np.float64)
    weight_a = np.zeros(m, dtype=np.float64)
    cdef double[::1] chars = chars_a
    cdef Py_ssize_t[::1] count = count_a
    cdef double[::1] stop_s = stop_a
    cdef double[::1] link_s = link_a
    cdef double[::1] weight = weight_a
    cdef double ld
    for i in range(n):
        k = inverse[i]
        chars[k] += lens[i]
        count[k] += 1
        stop_s[k] += stops[i] * lens[i]
        ld = x[i, C_LINK]
        link_s[k] += ld * lens[i]
        if cf[i] == J_GOOD or cf[i] == J_NEAR:
            weight[k] += lens[i]
        elif cf[i] == J_BAD:
            weight[k] += -lens[i]
    under_a = np.zeros(n_pref, dtype=np.float64)
    score_a = np.zeros(n_pref, dtype=np.float64)
    cdef double[::1] under = under_a
    cdef double[::1] score = score_a
    for k in range(m):
        under[info[k].prefix] += chars[k]
        if info[k].parent >= 0:
            under[info[k].parent] += chars[k]
        if info[k].grand >= 0:
            under[info[k].grand] += chars[k]
        pid = info[k].prefix
        while pid >= 0 and prefs[pid].depth >= 2:
            score[pid] += weight[k]
            pid = prefs[pid].parent
    logc_a = NP_LOG(count_a)
    cdef double[::1] logc = logc_a
    cdef double per_char
    for i in range(n):
        k = inverse[i]
        x[i, C_SP_SHARE] = chars[k] / total
        x[i, C_SP_COUNT] = logc[k]
        x[i, C_PAR_SHARE] = (under[info[k].parent] if info[k].parent >= 0 else 0.0) / total
        x[i, C_GRA_SHARE] = (under[info[k].grand] if info[k].grand >= 0 else 0.0) / total
        per_char = chars[k] if chars[k] > 1.0 else 1.0
        x[i, C_SP_STOP] = stop_s[k] / per_char
        x[i, C_SP_LINK] = link_s[k] / per_char
    # ---- main container ----
    cdef double prose = 0.0, best_score = 0.0, anc_best
    cdef int64_t best = -1
    for i in range(n):
        if cf[i] == J_GOOD or cf[i] == J_NEAR:
            prose += lens[i]
    for pid in range(n_pref):
        if prefs[pid].depth >= 2:
            if best < 0 or score[pid] > best_score or (score[pid] == best_score and prefs[pid].depth > prefs[best].depth):
                best = pid
                best_score = score[pid]
    cdef bint inside, any_anc
    if best >= 0 and prose > 0:
        in_main_a = np.zeros(m, dtype=np.float64)
        best_anc_a = np.zeros(m, dtype=np.float64)
        for k in range(m):
            inside = False
            any_anc = False
            anc_best = 0.0
            pid = info[k].prefix
            while pid >= 0 and prefs[pid].depth >= 2:
                if pid == best:
                    inside = True
                if not any_anc or score[pid] > anc_best:
                    anc_best = score[pid]
                any_anc = True
                pid = prefs[pid].parent
            in_main_a[k] = 1.0 if inside else 0.0
            best_anc_a[k] = (anc_best if any_anc else 0.0) / prose
        for i in range(n):
            k = inverse[i]
            x[i, C_MAIN_SHARE] = best_score / prose
            x[i, C_IN_MAIN] = in_main_a[k]
            x[i, C_BEST_ANC] = best_anc_a[k]
    # ---- distance to the nearest context-free good paragraph ----
    _good_distance(x, n, cf, cum, total)
    # ---- numpy's logarithms, on arrays of the reference's types ----
    X[:, C_NTAGS] = NP_LOG1P(ntags_a)
    _add_context(x, n)
    return X, paths


cdef bint _good_follows(Py_ssize_t i, signed char[::1] classes, double[::1] lengths, int64_t max_dist) noexcept:
    cdef double dist = 0.0
    cdef Py_ssize_t j
    for j in range(i + 1, classes.shape[0]):
        if classes[j] == J_GOOD:
            return True
        dist += lengths[j]
        if dist > max_dist:
            return False
    return False


cdef void _context_sensitive(signed char[::1] classes, signed char[::1] out, Py_ssize_t n) noexcept:
    cdef Py_ssize_t i = 0, j, k, pivot
    cdef signed char left, right
    for k in range(n):
        out[k] = classes[k]
    while i < n:
        if out[i] == J_GOOD or out[i] == J_BAD:
            i += 1
            continue
        j = i
        while j < n and out[j] != J_GOOD and out[j] != J_BAD:
            j += 1
        left = out[i - 1] if i > 0 else J_BAD
        right = out[j] if j < n else J_BAD
        if left == right:
            for k in range(i, j):
                out[k] = left
        else:
            pivot = -1
            if left == J_BAD:
                for k in range(i, j):
                    if classes[k] == J_NEAR:
                        pivot = k
                        break
            else:
                for k in range(j - 1, i - 1, -1):
                    if classes[k] == J_NEAR:
                        pivot = k
                        break
            if pivot < 0:
                for k in range(i, j):
                    out[k] = J_BAD
            else:
                for k in range(i, j):
                    if (k < pivot) if left == J_BAD else (k > pivot):
                        out[k] = J_BAD
                    else:
                        out[k] = J_GOOD
        i = j


cdef int _density_column(double[:, ::1] x, Py_ssize_t n, int64_t[::1] strip_len, int64_t *ntags) except -1:
    """density.classify: keep chunks denser than 0.5 - stdev (sample) of the kept."""
    cdef Py_ssize_t i, n_kept = 0
    cdef double d, mean = 0.0, ss = 0.0, sd = 0.0, thr
    cdef bint close = False
    dens_a = np.zeros(n, dtype=np.float64)
    cdef double[::1] dens = dens_a
    for i in range(n):
        if strip_len[i] >= DENSITY_MIN:
            dens[i] = (<double> (strip_len[i] + 1)) / (<double> (strip_len[i] + ntags[i] * MARKUP_PER_TAG_INT + 1))
            n_kept += 1
            mean += dens[i]
        else:
            dens[i] = -1.0
    if n_kept > 1:
        mean /= n_kept
        for i in range(n):
            if dens[i] >= 0:
                ss += (dens[i] - mean) * (dens[i] - mean)
        sd = sqrt(ss / (n_kept - 1))
        thr = DENSITY_BASE - sd
        for i in range(n):   # a close call takes statistics.stdev's exact value
            if dens[i] >= 0 and fabs(dens[i] - thr) < 1e-9:
                close = True
                break
        if close:
            sd = STDEV([dens[i] for i in range(n) if dens[i] >= 0])
    thr = DENSITY_BASE - sd
    for i in range(n):
        if dens[i] >= 0 and dens[i] > thr:
            x[i, C_DENSITY] = 1.0
    return 0


cdef void _bte_column(double[:, ::1] x, Py_ssize_t n, int64_t[::1] units, int64_t *ntags) noexcept:
    cdef int64_t best = 0, cur = 0
    cdef Py_ssize_t k, start = 0, b0 = -1, b1 = -1
    for k in range(n):
        cur -= ntags[k]
        if cur <= 0:
            cur = 0
            start = k
        if units[k] == 0:
            continue
        cur += units[k]
        if cur > best:
            best = cur
            b0 = start
            b1 = k
    if b0 >= 0:
        for k in range(b0, b1 + 1):
            x[k, C_BTE] = 1.0


cdef int _dup_column(double[:, ::1] x, Py_ssize_t n, uint32_t *codes, int64_t *off, Buf *slots_b, Buf *hash_b) except -1:
    """log of how often each plain text occurs on the page (math.log: libm)."""
    cdef Py_ssize_t cap = 16, i, j, s, r, L
    cdef uint64_t h
    while cap < 2 * n + 2:
        cap *= 2
    _grow(slots_b, cap, sizeof(int64_t))
    _grow(hash_b, n, sizeof(uint64_t))
    cdef int64_t *slots = <int64_t *> slots_b.p
    cdef uint64_t *hashes = <uint64_t *> hash_b.p
    memset(slots, 0xFF, cap * sizeof(int64_t))
    rep_a = np.empty(n, dtype=np.intp)      # each text's first paragraph
    cnt_a = np.zeros(n, dtype=np.intp)
    cdef Py_ssize_t[::1] rep = rep_a
    cdef Py_ssize_t[::1] cnt = cnt_a
    for i in range(n):
        h = 1469598103934665603ULL
        for j in range(off[i], off[i + 1]):
            h = _fnv(h, codes[j])
        hashes[i] = h
        L = off[i + 1] - off[i]
        s = h & (cap - 1)
        while True:
            r = slots[s]
            if r < 0:
                slots[s] = i
                rep[i] = i
                break
            if (hashes[r] == h and off[r + 1] - off[r] == L
                    and memcmp(codes + off[r], codes + off[i], L * sizeof(uint32_t)) == 0):
                rep[i] = r
                break
            s = (s + 1) & (cap - 1)
        cnt[rep[i]] += 1
    for i in range(n):
        x[i, C_DUP] = log(<double> cnt[rep[i]])
    return 0


cdef int _good_distance(double[:, ::1] x, Py_ssize_t n, signed char[::1] cf, double[::1] cum, double total) except -1:
    cdef Py_ssize_t i, left = -1, right, first = -1, last_good = -1, g_count = 0, pos_
    for i in range(n):
        if cf[i] == J_GOOD:
            g_count += 1
    if g_count == 0:
        for i in range(n):
            x[i, C_DIST] = log1p(<double> n)
            x[i, C_CHARS_TO] = log1p(total)
        return 0
    goods_a = np.empty(g_count, dtype=np.intp)
    cdef Py_ssize_t[::1] goods = goods_a
    g_count = 0
    for i in range(n):
        if cf[i] == J_GOOD:
            goods[g_count] = i
            g_count += 1
    d_a = np.empty(n, dtype=np.int64)
    dc_a = np.empty(n, dtype=np.float64)
    cdef int64_t[::1] d = d_a
    cdef double[::1] dc = dc_a
    cdef int64_t dl, dr
    cdef double cl, cr
    pos_ = 0     # goods before i: np.searchsorted(goods, i) (side left)
    for i in range(n):
        while pos_ < g_count and goods[pos_] < i:
            pos_ += 1
        left = goods[pos_ - 1 if pos_ - 1 >= 0 else 0]
        right = goods[pos_ if pos_ < g_count else g_count - 1]
        dl = i - left if i >= left else left - i
        dr = right - i if right >= i else i - right
        d[i] = dl if dl < dr else dr
        cl = fabs(cum[i] - cum[left])
        cr = fabs(cum[right] - cum[i])
        dc[i] = cl if cl < cr else cr
    dist = NP_LOG1P(d_a)
    chars_to = NP_LOG1P(dc_a)
    cdef double[::1] dv = dist
    cdef double[::1] cv = chars_to
    for i in range(n):
        x[i, C_DIST] = dv[i]
        x[i, C_CHARS_TO] = cv[i]
    return 0


cdef int _add_context(double[:, ::1] x, Py_ssize_t n) except -1:
    cdef Py_ssize_t i, k, o, w, lo, hi, src
    cdef double *csum = <double *> malloc((n + 1) * sizeof(double))
    if csum == NULL:
        raise MemoryError()
    for o in range(N_OFFSETS):
        for i in range(n):
            src = i + OFFSET[o]
            for k in range(N_CTX):
                x[i, CTX_OFF_COL[o][k]] = x[src, CTX_SRC[k]] if 0 <= src < n else -1.0
    for k in range(N_CTX):
        csum[0] = 0.0       # as np.vstack([zeros, np.cumsum(src)]): the first sum is src[0] itself
        csum[1] = x[0, CTX_SRC[k]]
        for i in range(1, n):
            csum[i + 1] = csum[i] + x[i, CTX_SRC[k]]
        for w in range(N_WINDOWS):
            for i in range(n):
                lo = i - WINDOW[w]
                hi = i + WINDOW[w] + 1
                lo = 0 if lo < 0 else (n if lo > n else lo)
                hi = 0 if hi < 0 else (n if hi > n else hi)
                x[i, CTX_WIN_COL[w][k]] = (csum[hi] - csum[lo]) / <double> (hi - lo)
    free(csum)
    return 0


# ---- the trees ----

cdef double _pairwise(const double *a, Py_ssize_t n) noexcept nogil:
    """numpy's pairwise sum of a contiguous run (loops_utils.h), the order .sum() adds in."""
    cdef Py_ssize_t i, n2
    cdef double res, r0, r1, r2, r3, r4, r5, r6, r7
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    elif n <= 128:
        r0 = a[0]; r1 = a[1]; r2 = a[2]; r3 = a[3]
        r4 = a[4]; r5 = a[5]; r6 = a[6]; r7 = a[7]
        i = 8
        while i < n - (n % 8):
            r0 += a[i]; r1 += a[i + 1]; r2 += a[i + 2]; r3 += a[i + 3]
            r4 += a[i + 4]; r5 += a[i + 5]; r6 += a[i + 6]; r7 += a[i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(a, n2) + _pairwise(a + n2, n - n2)


def margin(const double[:, ::1] X, const int64_t[:, ::1] feature, const double[:, ::1] threshold,
           const double[:, ::1] leaf, double base, int depth):
    """``model.Forest.margin``: every tree walked for every row, leaves added in numpy's order."""
    cdef Py_ssize_t n = X.shape[0], n_feat = X.shape[1], t = feature.shape[0]
    cdef Py_ssize_t n_int = feature.shape[1], i, tr, node, r
    cdef int64_t f
    out_a = np.empty(n, dtype=np.float64)
    cdef double[::1] out = out_a
    if n == 0 or t == 0:
        out_a.fill(base)
        return out_a
    if depth < 1 or n_int != (1 << depth) - 1 or leaf.shape[1] != n_int + 1 or threshold.shape[1] != n_int:
        raise ValueError("a forest of another shape")
    if leaf.shape[0] != t or threshold.shape[0] != t:
        raise ValueError("a forest of another shape")
    for tr in range(t):
        for node in range(n_int):
            f = feature[tr, node]
            if f < 0 or f >= n_feat:
                raise ValueError("a tree reads a column the matrix does not have")
    feat_a = np.ascontiguousarray(feature, dtype=np.int32)
    cdef const int32_t[:, ::1] feat32 = feat_a
    cdef double *vals = <double *> malloc(8 * t * sizeof(double))
    if vals == NULL:
        raise MemoryError()
    cdef const double *x
    cdef const int32_t *ft
    cdef const double *th
    cdef const double *lf
    cdef Py_ssize_t n0, n1, n2, n3, n4, n5, n6, n7, lvl, s1, s2, s3, s4, s5, s6, s7, m
    with nogil:
        i = 0
        while i < n:
            # eight rows at once: eight independent walks down each tree (a short last
            # block walks its first row again in the missing places)
            m = n - i if n - i < 8 else 8
            x = &X[i, 0]
            s1 = n_feat if m > 1 else 0
            s2 = 2 * n_feat if m > 2 else 0
            s3 = 3 * n_feat if m > 3 else 0
            s4 = 4 * n_feat if m > 4 else 0
            s5 = 5 * n_feat if m > 5 else 0
            s6 = 6 * n_feat if m > 6 else 0
            s7 = 7 * n_feat if m > 7 else 0
            for tr in range(t):
                ft = &feat32[tr, 0]
                th = &threshold[tr, 0]
                lf = &leaf[tr, 0]
                n0 = n1 = n2 = n3 = n4 = n5 = n6 = n7 = 0
                for lvl in range(depth):
                    n0 = 2 * n0 + 1 + (x[ft[n0]] > th[n0])
                    n1 = 2 * n1 + 1 + (x[s1 + ft[n1]] > th[n1])
                    n2 = 2 * n2 + 1 + (x[s2 + ft[n2]] > th[n2])
                    n3 = 2 * n3 + 1 + (x[s3 + ft[n3]] > th[n3])
                    n4 = 2 * n4 + 1 + (x[s4 + ft[n4]] > th[n4])
                    n5 = 2 * n5 + 1 + (x[s5 + ft[n5]] > th[n5])
                    n6 = 2 * n6 + 1 + (x[s6 + ft[n6]] > th[n6])
                    n7 = 2 * n7 + 1 + (x[s7 + ft[n7]] > th[n7])
                vals[tr] = lf[n0 - n_int]
                vals[t + tr] = lf[n1 - n_int]
                vals[2 * t + tr] = lf[n2 - n_int]
                vals[3 * t + tr] = lf[n3 - n_int]
                vals[4 * t + tr] = lf[n4 - n_int]
                vals[5 * t + tr] = lf[n5 - n_int]
                vals[6 * t + tr] = lf[n6 - n_int]
                vals[7 * t + tr] = lf[n7 - n_int]
            for r in range(m):
                out[i + r] = base + (0.0 + _pairwise(vals + r * t, t))
            i += m
    free(vals)
    return out_a
