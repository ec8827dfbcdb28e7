# The signatures' parts the per-document passes share (corpus_signatures.pyx, corpus_step.pyx):
# growing code-point buffers, the n-gram SimHash and one-permutation MinHash, and NFKC with
# lower case by one look-up per character. Needs corpus_common.pxi included before it.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_KIND, PyUnicode_READ, PyUnicode_WRITE

cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)

cdef uint64_t BIN_SEED = 0xB1A5ED0DDE45EEDULL
cdef uint32_t EMPTY = 0xFFFFFFFFU


cdef struct GrowBuf:
    uint32_t *cp
    Py_ssize_t len
    Py_ssize_t cap


cdef int buf_reserve(GrowBuf *b, Py_ssize_t extra) except -1:
    cdef Py_ssize_t want = b.len + extra
    cdef uint32_t *p
    if want <= b.cap:
        return 0
    want = max(want, 2 * b.cap, 4096)
    p = <uint32_t *> realloc(b.cp, want * sizeof(uint32_t))
    if p == NULL:
        raise MemoryError()
    b.cp, b.cap = p, want
    return 0



cdef struct GramTables:
    uint64_t *pw        # GOLDEN ** j for j < the longest n-gram (at least one entry)
    char *filled        # one_permutation's mark per MinHash bin (at least one)


cdef int gram_tables(GramTables *t, Py_ssize_t g, int bins) except -1:
    """The tables of the n-gram hashes for n-grams up to g and ``bins`` MinHash bins, in
    memory ``gram_tables_free`` frees (nothing is left allocated when this fails)."""
    cdef Py_ssize_t k
    t.pw = <uint64_t *> malloc((g if g > 0 else 1) * sizeof(uint64_t))
    t.filled = <char *> malloc(bins if bins > 0 else 1)
    if t.pw == NULL or t.filled == NULL:
        gram_tables_free(t)
        raise MemoryError()
    t.pw[0] = 1
    for k in range(1, g):
        t.pw[k] = t.pw[k - 1] * GOLDEN
    return 0


cdef void gram_tables_free(GramTables *t) noexcept:
    free(t.pw)
    free(t.filled)
    t.pw = NULL
    t.filled = NULL


cdef inline uint64_t gram_hash(const uint32_t *cp, Py_ssize_t k, const uint64_t *pw, uint64_t n) noexcept nogil:
    cdef uint64_t h = 0
    cdef Py_ssize_t j
    for j in range(k):
        h += cp[j] * pw[j]
    return mix(h ^ n)


# The inverse of GOLDEN modulo 2**64: the n-gram polynomial sum_j cp[i+j] x GOLDEN**j rolls
# from one start to the next with two products, whatever n.
cdef uint64_t GOLDEN_INV = 0xF1DE83E19937733DULL


cdef inline uint64_t grams_first(const uint32_t *cp, Py_ssize_t g, const uint64_t *pw) noexcept nogil:
    """The polynomial of the n-gram starting at 0 (before its mix)."""
    cdef uint64_t raw = 0
    cdef Py_ssize_t j
    for j in range(g):
        raw += cp[j] * pw[j]
    return raw


# From the n-gram starting at i - 1 (``raw``) to the one starting at i; ``top`` is GOLDEN **
# (g - 1). The callers keep ``raw`` in a local of their own (never a struct or a pointer's
# target): a store through a byte pointer in the loop (MinHash's marks) would otherwise
# make the compiler write and read it back for every n-gram.
cdef inline uint64_t grams_next(uint64_t raw, const uint32_t *cp, Py_ssize_t i, Py_ssize_t g, uint64_t top) noexcept nogil:
    return (raw - cp[i - 1]) * GOLDEN_INV + cp[i + g - 1] * top


cdef uint64_t simhash(const uint32_t *cp, Py_ssize_t n, Py_ssize_t g, const uint64_t *pw) noexcept nogil:
    """Bit j set when bit j is set in more than half of the n-gram hashes. Counted four bits
    at a time in nibbles (nibble k of ``nib[b]`` counts bit 4k+b), added every 15 n-grams to
    byte counters (byte k of ``lo[b]``/``hi[b]`` counts bit 8k+b/8k+4+b), added every 255
    to the totals: each before it can overflow. Up to 255 n-grams (most paragraphs) the
    byte counters are compared with the half all at once."""
    cdef uint64_t nib[4]
    cdef uint64_t lo[4]
    cdef uint64_t hi[4]
    cdef uint32_t count[64]
    cdef Py_ssize_t grams, i, e, b, k, in_byte = 0
    cdef uint64_t h, out = 0, half, raw, top
    if n == 0:
        return 0
    if n <= g:     # one n-gram: its hash is the majority
        return gram_hash(cp, n, pw, <uint64_t> g)
    grams = n - g + 1
    for b in range(4):
        nib[b] = lo[b] = hi[b] = 0
    if grams > 255:
        for b in range(64):
            count[b] = 0
    raw, top = grams_first(cp, g, pw), pw[g - 1]
    i = 0
    while i < grams:
        e = i + 15 if i + 15 < grams else grams
        while i < e:
            if i:
                raw = grams_next(raw, cp, i, g, top)
            h = mix(raw ^ <uint64_t> g)
            nib[0] += h & 0x1111111111111111ULL
            nib[1] += (h >> 1) & 0x1111111111111111ULL
            nib[2] += (h >> 2) & 0x1111111111111111ULL
            nib[3] += (h >> 3) & 0x1111111111111111ULL
            i += 1
        for b in range(4):
            lo[b] += nib[b] & 0x0F0F0F0F0F0F0F0FULL
            hi[b] += (nib[b] >> 4) & 0x0F0F0F0F0F0F0F0FULL
            nib[b] = 0
        in_byte += 1
        if grams > 255 and (in_byte == 17 or i == grams):
            for b in range(4):
                for k in range(8):
                    count[8 * k + b] += (lo[b] >> (8 * k)) & 0xFF
                    count[8 * k + 4 + b] += (hi[b] >> (8 * k)) & 0xFF
                lo[b] = hi[b] = 0
            in_byte = 0
    if grams <= 255:
        # a byte x is over the half (x >= grams // 2 + 1, at most 128) where bit 7 of
        # x | ((x | 0x80) - that) is set: no borrow crosses a byte
        half = (<uint64_t> (grams // 2 + 1)) * 0x0101010101010101ULL
        for b in range(4):
            h = (lo[b] | ((lo[b] | 0x8080808080808080ULL) - half)) & 0x8080808080808080ULL
            out |= (h >> 7) << b
            h = (hi[b] | ((hi[b] | 0x8080808080808080ULL) - half)) & 0x8080808080808080ULL
            out |= (h >> 7) << (4 + b)
        return out
    for b in range(64):
        if 2 * <uint64_t> count[b] > <uint64_t> grams:
            out |= (<uint64_t> 1) << b
    return out


cdef void one_permutation(const uint32_t *cp, Py_ssize_t n, Py_ssize_t g, const uint64_t *pw,
                          int bins, uint32_t *row, char *filled) noexcept nogil:
    """One-permutation MinHash: each n-gram hash goes to bin (high 32 bits x bins) >> 32
    and keeps the smallest low 32 bits there; an empty bin takes the value of the bin its
    probe sequence reaches first (``signatures.densify``)."""
    cdef Py_ssize_t i
    cdef int bn, t, j
    cdef uint64_t h, raw, top
    cdef uint32_t v
    for bn in range(bins):
        row[bn] = EMPTY
        filled[bn] = 0
    if n == 0:
        return
    if n < g:    # one n-gram, the whole text
        h = gram_hash(cp, n, pw, <uint64_t> g)
        bn = <int> (((h >> 32) * <uint64_t> bins) >> 32)
        row[bn] = <uint32_t> h
        filled[bn] = 1
    else:
        raw, top = grams_first(cp, g, pw), pw[g - 1]
        for i in range(n - g + 1):
            if i:
                raw = grams_next(raw, cp, i, g, top)
            h = mix(raw ^ <uint64_t> g)
            bn = <int> (((h >> 32) * <uint64_t> bins) >> 32)
            v = <uint32_t> h
            # an empty bin holds EMPTY, the largest value: the smaller of the two is right
            # either way (no branch on random bins)
            row[bn] = v if v < row[bn] else row[bn]
            filled[bn] = 1
    for bn in range(bins):
        if filled[bn]:
            continue
        j = -1
        for t in range(1, 8 * bins + 1):
            j = <int> (mix(BIN_SEED ^ (<uint64_t> bn << 32) ^ <uint64_t> t) % <uint64_t> bins)
            if filled[j]:
                break
            j = -1
        if j < 0:   # not reached in 8 x bins probes: the next filled bin
            for t in range(1, bins):
                if filled[(bn + t) % bins]:
                    j = (bn + t) % bins
                    break
        row[bn] = row[j]


cdef uint32_t NFKC_AT[65536]      # start in NFKC_POOL, or 0xFFFFFFFF: not in the table
cdef uint8_t NFKC_LEN[65536]
cdef uint32_t *NFKC_POOL = NULL
cdef bint NFKC_READY = False


def configure_nfkc(list table):
    """Per BMP code point, its NFKC form in lower case when that holds in any context
    (``normalise.simple_nfkc_lower_table``: a string of at most 8 characters), else None."""
    global NFKC_READY, NFKC_POOL
    cdef Py_ssize_t i, j, at = 0
    cdef uint32_t *pool
    if len(table) != 65536:
        raise ValueError("the table must cover the Basic Multilingual Plane")
    pool = <uint32_t *> realloc(NFKC_POOL, sum(len(x) for x in table if x) * sizeof(uint32_t) + 4)
    if pool == NULL:
        raise MemoryError()
    NFKC_POOL = pool
    for i in range(65536):
        x = table[i]
        if x is None or not 0 < len(x) <= 8:
            NFKC_AT[i] = 0xFFFFFFFFU
            NFKC_LEN[i] = 0
            continue
        NFKC_AT[i] = <uint32_t> at
        NFKC_LEN[i] = <uint8_t> len(x)
        for j in range(len(x)):
            pool[at] = ord(x[j])
            at += 1
    NFKC_READY = True


def simple_nfkc_lower(str text):
    """``unicodedata.normalize("NFKC", text).lower()`` by one look-up per character, or
    None when a character of the text is not in the table (then the caller normalises)."""
    cdef Py_ssize_t n = len(text), i, k = 0, j
    cdef int kind = PyUnicode_KIND(text), out_kind
    cdef void *data = PyUnicode_DATA(text)
    cdef void *out_data
    cdef uint32_t ch, at, top = 0
    cdef object out
    if not NFKC_READY:
        return None
    for i in range(n):     # the length and the largest character first: one string, no copy
        ch = PyUnicode_READ(kind, data, i)
        if ch > 0xFFFF or NFKC_AT[ch] == 0xFFFFFFFFU:
            return None
        at = NFKC_AT[ch]
        for j in range(NFKC_LEN[ch]):
            top = max(top, NFKC_POOL[at + j])
        k += NFKC_LEN[ch]
    out = PyUnicode_New(k, top)
    out_kind, out_data = PyUnicode_KIND(out), PyUnicode_DATA(out)
    k = 0
    for i in range(n):
        ch = PyUnicode_READ(kind, data, i)
        at = NFKC_AT[ch]
        for j in range(NFKC_LEN[ch]):
            PyUnicode_WRITE(out_kind, out_data, k, NFKC_POOL[at + j])
            k += 1
    return out
