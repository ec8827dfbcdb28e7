# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A supervised fastText classifier's probability of one label per lake document, read
straight from the UTF-8 of an Arrow string column (no Python string per document).

A document's line is that of ``models.fasttext_lines``: its paragraphs labelled good (all
when it has no labels), each without its CSS path, joined by a space, link markers out.
Its probability is what fastText's ``predict(line, k=-1)`` reports for the label; the
definition, step by step, is ``signals/fasttext_format.py`` (``Reference``), and the
``fasttext`` package is what both must equal. Dense models (``.bin``) with the softmax,
hierarchical softmax, one-vs-all or negative-sampling loss; word and character n-grams.
"""
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy, memset
from libc.math cimport exp, expf, isnan, log

cdef enum:
    LOSS_HS = 1
    LOSS_NS = 2
    LOSS_SOFTMAX = 3
    LOSS_OVA = 4
    PATH_CH = 0x1C
    LINK_START = 2
    LINK_END = 3

cdef extern from *:
    """
    #define FT_FNV_OFFSET 2166136261u
    #define FT_FNV_PRIME 16777619u
    #define FT_NGRAM_MUL 116049371ull
    #define FT_GOLDEN 0x9E3779B97F4A7C15ull
    #define FT_MAX_TOKEN 0x7FFFFFFFll
    #define FT_KEY_MUL 0xFF51AFD7ED558CCDull
    /* the k (1..8) bytes at p as a little-endian number; 8 bytes at p must be readable */
    static inline uint64_t ft_load(const uint8_t *p, Py_ssize_t k) {
        uint64_t x;
        memcpy(&x, p, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        x = __builtin_bswap64(x);
    #endif
        return k >= 8 ? x : x & ((1ull << (8 * k)) - 1);
    }
    /* size bytes of zeros, on huge pages where Linux gives them on request: the look-ups
       and rows are read at random places of tens of megabytes, and with 4 kB pages
       nearly every read misses the TLB too */
    #if defined(__linux__)
    #include <sys/mman.h>
    #include <stdlib.h>
    static void *ft_alloc_zeroed(size_t size) {
        void *p = NULL;
        size_t huge = (size_t) 1 << 21;
        if (size < huge) return calloc(size ? size : 1, 1);
        size = (size + huge - 1) & ~(huge - 1);
        if (posix_memalign(&p, huge, size) != 0) return NULL;
    #ifdef MADV_HUGEPAGE
        madvise(p, size, MADV_HUGEPAGE);
    #endif
        memset(p, 0, size);
        return p;
    }
    #else
    static void *ft_alloc_zeroed(size_t size) { return calloc(size ? size : 1, 1); }
    #endif
    """
    const uint32_t FNV_OFFSET "FT_FNV_OFFSET"
    const uint32_t FNV_PRIME "FT_FNV_PRIME"
    const uint64_t NGRAM_MUL "FT_NGRAM_MUL"       # fastText's word n-gram hash
    const uint64_t GOLDEN "FT_GOLDEN"
    const int64_t MAX_TOKEN "FT_MAX_TOKEN"       # a token's length is an int32 (a C constant: no Python int)
    const uint64_t KEY_MUL "FT_KEY_MUL"
    uint64_t load_bytes "ft_load"(const uint8_t *p, Py_ssize_t k) noexcept nogil
    void *alloc_zeroed "ft_alloc_zeroed"(size_t size) noexcept nogil
    void prefetch "__builtin_prefetch"(const void *p) noexcept nogil

cdef enum:
    AHEAD = 32       # look-ups and rows are prefetched this many tokens ahead (memory latency)
    SLACK = 8        # bytes readable past the line's end (``table_key`` reads 8 at a time)


cdef enum:
    INLINE = 20     # a dictionary entry of up to this many bytes is compared in its slot


cdef struct Slot:   # 32 bytes: a look-up reads one cache line
    uint32_t hash
    int32_t entry   # -1: empty
    uint32_t length
    uint8_t bytes[INLINE]


cdef struct ModelData:
    int dim, nwords, nlabels, word_ngrams, bucket, minn, maxn, loss
    float *wi                   # the input matrix, copied on huge pages (``alloc_zeroed``)
    const float *wo
    const uint8_t *ebytes       # the entries' bytes, one after another
    const int64_t *eoff         # entry i: ebytes[eoff[i]:eoff[i + 1]]
    const int8_t *etype         # 0 word, 1 label
    Slot *slot                  # open addressing over the entries
    int slot_bits
    const int32_t *left         # hierarchical softmax: the Huffman tree (2 * labels - 1 nodes)
    const int32_t *parent
    float sig[513]              # the one-vs-all loss's sigmoid table


cdef struct Line:
    # the line's tokens, one after another in ``buf`` (separators and link markers left out)
    uint8_t *buf
    Py_ssize_t pos, buf_cap
    int64_t *end                     # per token: where its bytes end in buf (the next one's start)
    Py_ssize_t n_tok, end_cap
    uint32_t *hash                   # per token: its table key,
    int64_t *entry                   # its dictionary entry (-1: none)
    Py_ssize_t tok_cap
    uint8_t *word                    # "<" token ">": the word of a token's character n-grams
    Py_ssize_t word_cap
    int64_t *ids                     # the rows of the line's word n-grams
    Py_ssize_t n_ids, ids_cap
    uint32_t *hashes                 # the word tokens' fastText hashes (word n-grams)
    Py_ssize_t n_hashes, hash_cap
    float *hidden
    float *output
    int32_t *path
    int64_t rows


cdef enum:
    WORD_BYTE = 0
    SEPARATOR = 1       # fastText splits words on it
    MARKER = 2          # a link marker: not in the line

cdef uint8_t BYTE_CLASS[256]
for _b in range(256):
    BYTE_CLASS[_b] = (SEPARATOR if _b in (0x20, 0x0A, 0x0D, 0x09, 0x0B, 0x0C, 0x00)
                      else MARKER if _b in (LINK_START, LINK_END) else WORD_BYTE)


cdef inline uint32_t fnv_step(uint32_t h, uint8_t b) noexcept nogil:
    # fastText xors each byte as a signed char: 0x80 and over sign-extended
    return (h ^ <uint32_t> <int32_t> <int8_t> b) * FNV_PRIME


def fnv_hash(const uint8_t[::1] token) -> int:
    """fastText's hash of ``token`` (``fasttext_format.fnv_hash``)."""
    cdef uint32_t h = FNV_OFFSET
    cdef Py_ssize_t i
    for i in range(token.shape[0]):
        h = fnv_step(h, token[i])
    return h


cdef inline uint32_t fnv(const uint8_t *w, Py_ssize_t n) noexcept nogil:
    cdef uint32_t h = FNV_OFFSET
    cdef Py_ssize_t i
    for i in range(n):
        h = fnv_step(h, w[i])
    return h


cdef inline uint32_t table_key(const uint8_t *w, Py_ssize_t n) noexcept nogil:
    """The dictionary table's hash of ``w[:n]``, 8 bytes at a time (``SLACK`` bytes past
    the end must be readable). The table is this module's own: fastText's word hash (a
    multiplication per byte, one after the other) is needed only for word n-grams."""
    cdef uint64_t h = <uint64_t> n * KEY_MUL
    cdef Py_ssize_t i = 0
    while i < n:
        h = (h ^ load_bytes(w + i, n - i)) * KEY_MUL
        h ^= h >> 29
        i += 8
    return <uint32_t> (h ^ (h >> 32))


cdef inline Py_ssize_t slot_of(const ModelData *m, uint32_t h) noexcept nogil:
    return <Py_ssize_t> ((<uint64_t> h * GOLDEN) >> (64 - m.slot_bits))


cdef inline bint same_bytes(const uint8_t *a, const uint8_t *b, Py_ssize_t n) noexcept nogil:
    # a word is a few bytes: a loop here costs less than a call to memcmp
    cdef Py_ssize_t i
    for i in range(n):
        if a[i] != b[i]:
            return False
    return True


cdef inline int64_t lookup(const ModelData *m, const uint8_t *w, Py_ssize_t n, uint32_t h) noexcept nogil:
    """The entry of the token ``w[:n]`` (hash ``h``), or -1."""
    cdef Py_ssize_t s = slot_of(m, h), mask = (<Py_ssize_t> 1 << m.slot_bits) - 1
    cdef const Slot *t
    while True:
        t = &m.slot[s]
        if t.entry < 0:
            return -1
        if t.hash == h and t.length == n:
            if n <= INLINE:
                if same_bytes(t.bytes, w, n):
                    return t.entry
            elif memcmp(m.ebytes + m.eoff[t.entry], w, n) == 0:
                return t.entry
        s = (s + 1) & mask


cdef class Model:
    """A model's arrays (``fasttext_format.FastTextFile``) with its dictionary's hash table."""
    cdef ModelData m
    cdef object keep

    def __cinit__(self):
        self.m.slot = NULL
        self.m.wi = NULL

    def __init__(self, const uint8_t[::1] entry_bytes, const int64_t[::1] entry_off, const int8_t[::1] types,
                 const float[:, ::1] wi, const float[:, ::1] wo, int nwords, int word_ngrams, int bucket,
                 int minn, int maxn, int loss, const int32_t[::1] left, const int32_t[::1] parent):
        cdef Py_ssize_t n = types.shape[0], i, s, size, mask, length, longest = 0
        cdef uint32_t h
        cdef int64_t e
        cdef Slot *t
        cdef uint8_t *pad = NULL
        cdef int bits = 1
        if entry_off.shape[0] != n + 1 or wi.shape[0] != nwords + bucket or wo.shape[1] != wi.shape[1]:
            raise ValueError("inconsistent model arrays")
        if wo.shape[0] != n - nwords or n - nwords < 1 or wi.shape[1] < 1:
            raise ValueError("one output row per label, at least one label and one dimension")
        if loss not in (LOSS_HS, LOSS_NS, LOSS_SOFTMAX, LOSS_OVA):
            raise ValueError(f"unknown loss {loss}")
        if (word_ngrams > 1 or maxn > 0) and bucket < 1:
            raise ValueError("n-grams need a bucket")
        if loss == LOSS_HS and (left.shape[0] != 2 * (n - nwords) - 1 or parent.shape[0] != left.shape[0]):
            raise ValueError("the hierarchical softmax needs its tree")
        if entry_off[n] > entry_bytes.shape[0]:
            raise ValueError("entries past their bytes")
        self.keep = (entry_bytes, entry_off, types, wo, left, parent)
        self.m.dim, self.m.nwords, self.m.nlabels = wi.shape[1], nwords, n - nwords
        self.m.word_ngrams, self.m.bucket, self.m.minn, self.m.maxn, self.m.loss = word_ngrams, bucket, minn, maxn, loss
        self.m.wi = <float *> alloc_zeroed(wi.shape[0] * wi.shape[1] * sizeof(float))
        if self.m.wi == NULL:
            raise MemoryError()
        if wi.shape[0]:
            memcpy(self.m.wi, &wi[0, 0], wi.shape[0] * wi.shape[1] * sizeof(float))
        self.m.wo = &wo[0, 0]
        self.m.ebytes = &entry_bytes[0] if entry_bytes.shape[0] else NULL
        self.m.eoff = &entry_off[0]
        self.m.etype = &types[0]
        self.m.left = &left[0] if left.shape[0] else NULL
        self.m.parent = &parent[0] if parent.shape[0] else NULL
        for i in range(513):   # fastText's table: x = float(i * 16) / 512 - 8
            self.m.sig[i] = <float> (1.0 / (1.0 + <double> expf(-(<float> (i * 16) / <float> 512 - <float> 8))))
        while (<Py_ssize_t> 1 << bits) < 2 * n + 2:
            bits += 1
        size, mask = <Py_ssize_t> 1 << bits, (<Py_ssize_t> 1 << bits) - 1
        if n > MAX_TOKEN:
            raise ValueError("too many dictionary entries")
        self.m.slot_bits = bits
        self.m.slot = <Slot *> alloc_zeroed(size * sizeof(Slot))
        if self.m.slot == NULL:
            raise MemoryError()
        for i in range(size):
            self.m.slot[i].entry = -1
        for e in range(n):
            if entry_off[e + 1] < entry_off[e] or entry_off[e + 1] - entry_off[e] > MAX_TOKEN:
                raise ValueError("entry offsets go back")
            longest = max(longest, entry_off[e + 1] - entry_off[e])
        pad = <uint8_t *> calloc(longest + SLACK, 1)   # an entry with readable bytes after it
        if pad == NULL:
            raise MemoryError()
        try:
            for e in range(n):
                length = entry_off[e + 1] - entry_off[e]
                if length:
                    memcpy(pad, self.m.ebytes + entry_off[e], length)
                h = table_key(pad, length)
                i = lookup(&self.m, pad, length, h) if length else -1
                s = slot_of(&self.m, h)
                while self.m.slot[s].entry >= 0 and self.m.slot[s].entry != i:
                    s = (s + 1) & mask
                t = &self.m.slot[s]
                t.entry, t.hash, t.length = e, h, length    # a repeated entry: the last one, as fastText's
                if length <= INLINE:
                    memcpy(t.bytes, pad, length)
        finally:
            free(pad)

    def __dealloc__(self):
        free(self.m.slot)
        free(self.m.wi)

    def label_index(self, bytes label) -> int:
        """The label's number (0 = the first label), or -1 when the model has none such."""
        cdef bytes padded = label + b"\0" * SLACK
        cdef const uint8_t *w = <const uint8_t *> <char *> padded
        cdef int64_t e = lookup(&self.m, w, len(label), table_key(w, len(label)))
        return -1 if e < self.m.nwords else e - self.m.nwords


cdef int grow(void **p, Py_ssize_t *cap, Py_ssize_t need, Py_ssize_t item) except -1:
    cdef Py_ssize_t c = cap[0]
    cdef void *q
    if need <= c:
        return 0
    while c < need:
        c = c * 2 + 64
    q = realloc(p[0], c * item)
    if q == NULL:
        raise MemoryError()
    p[0], cap[0] = q, c
    return 0


cdef inline void add_row(const ModelData *m, Line *s, int64_t row) noexcept nogil:
    cdef const float *r = m.wi + row * m.dim
    cdef int j
    for j in range(m.dim):
        s.hidden[j] += r[j]
    s.rows += 1


cdef inline void prefetch_row(const ModelData *m, int64_t row) noexcept nogil:
    cdef const char *r = <const char *> (m.wi + row * m.dim)
    cdef Py_ssize_t k
    for k in range(0, m.dim * 4, 64):
        prefetch(r + k)


cdef void char_ngrams(const ModelData *m, Line *s, const uint8_t *w, Py_ssize_t wl) noexcept nogil:
    """The rows of the character n-grams of ``w[:wl]`` (``<token>``)."""
    cdef Py_ssize_t i, j
    cdef int n
    cdef uint32_t h
    for i in range(wl):
        if (w[i] & 0xC0) == 0x80:
            continue
        h = FNV_OFFSET
        j, n = i, 1
        while j < wl and n <= m.maxn:
            h = fnv_step(h, w[j])
            j += 1
            while j < wl and (w[j] & 0xC0) == 0x80:
                h = fnv_step(h, w[j])
                j += 1
            if n >= m.minn and not (n == 1 and (i == 0 or j == wl)):
                add_row(m, s, m.nwords + <int64_t> (h % <uint32_t> m.bucket))
            n += 1


cdef int line_rows(const ModelData *m, Line *s) except -1:
    """The rows of the line's tokens into the hidden sum, in fastText's order: each token's
    (its row, its character n-grams), then the word n-grams. The line ends at its first
    "</s>" token, or gets one at its end (fastText's getLine). Look-ups and rows are
    prefetched ahead of their use."""
    cdef Py_ssize_t i, j, n, a, last
    cdef int64_t e
    cdef int kind
    cdef const uint8_t *w
    cdef uint64_t h
    cdef bint stopped = False
    grow(<void **> &s.buf, &s.buf_cap, s.pos + 4 + SLACK, 1)
    grow(<void **> &s.end, &s.end_cap, s.n_tok + 1, sizeof(int64_t))
    a = 0
    for i in range(s.n_tok):
        n = s.end[i] - a
        if n > MAX_TOKEN:
            raise ValueError("a token of 2 GB")
        if n == 4 and memcmp(s.buf + a, b"</s>", 4) == 0:
            s.n_tok = i + 1
            stopped = True
            break
        a = s.end[i]
    if not stopped:
        memcpy(s.buf + s.pos, b"</s>", 4)
        s.pos += 4
        s.end[s.n_tok] = s.pos
        s.n_tok += 1
    if s.n_tok > s.tok_cap:
        n = s.tok_cap
        grow(<void **> &s.hash, &n, s.n_tok, sizeof(uint32_t))
        grow(<void **> &s.entry, &s.tok_cap, s.n_tok, sizeof(int64_t))
    a = 0
    for i in range(s.n_tok):
        s.hash[i] = table_key(s.buf + a, s.end[i] - a)
        a = s.end[i]
    for i in range(min(AHEAD, s.n_tok)):
        prefetch(&m.slot[slot_of(m, s.hash[i])])
    a = 0
    for i in range(s.n_tok):
        if i + AHEAD < s.n_tok:
            prefetch(&m.slot[slot_of(m, s.hash[i + AHEAD])])
        s.entry[i] = lookup(m, s.buf + a, s.end[i] - a, s.hash[i])
        a = s.end[i]
    for i in range(min(AHEAD, s.n_tok)):
        if s.entry[i] >= 0:
            prefetch_row(m, s.entry[i])
    s.n_hashes = 0
    last = s.n_tok - 1      # the "</s>": no character n-grams
    a = 0
    for i in range(s.n_tok):
        if i + AHEAD < s.n_tok and s.entry[i + AHEAD] >= 0:
            prefetch_row(m, s.entry[i + AHEAD])
        e, w, n = s.entry[i], s.buf + a, s.end[i] - a
        a = s.end[i]
        if e >= 0:
            kind = m.etype[e]
        else:
            kind = 1 if n >= 9 and memcmp(w, b"__label__", 9) == 0 else 0
        if kind != 0:
            continue
        if e >= 0:
            add_row(m, s, e)
        if m.maxn > 0 and i != last:
            grow(<void **> &s.word, &s.word_cap, n + 2, 1)
            s.word[0] = 60    # "<"
            memcpy(s.word + 1, w, n)
            s.word[n + 1] = 62    # ">"
            char_ngrams(m, s, s.word, n + 2)
        if m.word_ngrams > 1:
            grow(<void **> &s.hashes, &s.hash_cap, s.n_hashes + 1, sizeof(uint32_t))
            s.hashes[s.n_hashes] = fnv(w, n)
            s.n_hashes += 1
    if m.word_ngrams <= 1:
        return 0
    s.n_ids = 0
    for i in range(s.n_hashes):
        h = <uint64_t> <int64_t> <int32_t> s.hashes[i]
        j = i + 1
        while j < s.n_hashes and j < i + m.word_ngrams:
            h = h * NGRAM_MUL + <uint64_t> <int64_t> <int32_t> s.hashes[j]
            grow(<void **> &s.ids, &s.ids_cap, s.n_ids + 1, sizeof(int64_t))
            s.ids[s.n_ids] = m.nwords + <int64_t> (h % <uint64_t> m.bucket)
            s.n_ids += 1
            j += 1
    for i in range(min(AHEAD, s.n_ids)):
        prefetch_row(m, s.ids[i])
    for i in range(s.n_ids):
        if i + AHEAD < s.n_ids:
            prefetch_row(m, s.ids[i + AHEAD])
        add_row(m, s, s.ids[i])
    return 0


cdef inline float dot_row(const ModelData *m, const Line *s, int64_t row) noexcept nogil:
    cdef const float *r = m.wo + row * m.dim
    cdef float d = 0.0
    cdef int j
    for j in range(m.dim):
        d += r[j] * s.hidden[j]
    return d


cdef inline float std_log(float x) noexcept nogil:
    return <float> log(<double> x + 1e-5)


cdef double probability(const ModelData *m, Line *s, int label) noexcept nogil:
    """fastText's reported probability of ``label`` from the hidden vector (NaN where
    fastText finds a NaN)."""
    cdef int i, depth, node, child
    cdef float mx, z, p, f, score, floor, x
    cdef double inv = 1.0 / <double> s.rows
    cdef float scale = <float> inv
    for i in range(m.dim):
        s.hidden[i] *= scale
    if m.loss == LOSS_HS:
        if label < 0:
            return 0.0
        depth, node = 0, label
        while m.parent[node] >= 0:
            s.path[depth] = node
            depth += 1
            node = m.parent[node]
        floor = std_log(0.0)
        score = 0.0
        while depth > 0:
            if score < floor:
                return 0.0
            depth -= 1
            child = s.path[depth]
            node = m.parent[child]
            f = dot_row(m, s, node - m.nlabels)
            if isnan(f):
                return f
            f = <float> (1.0 / <double> (<float> 1.0 + expf(-f)))
            x = <float> (1.0 - <double> f) if child == m.left[node] else f
            score = score + std_log(x)
        if score < floor:
            return 0.0
        return <double> expf(score)
    if label < 0:
        return 0.0
    if m.loss == LOSS_SOFTMAX:
        for i in range(m.nlabels):
            s.output[i] = dot_row(m, s, i)
            if isnan(s.output[i]):
                return s.output[i]
        mx = s.output[0]
        for i in range(m.nlabels):
            if mx < s.output[i]:
                mx = s.output[i]
        z = 0.0
        for i in range(m.nlabels):
            s.output[i] = <float> exp(<double> (s.output[i] - mx))
            z += s.output[i]
        p = s.output[label] / z
    else:
        x = dot_row(m, s, label)
        if isnan(x):
            return x
        if x < -8:
            p = 0.0
        elif x > 8:
            p = 1.0
        else:
            p = m.sig[<int64_t> ((x + <float> 8) * <float> 512 / <float> 8 / <float> 2)]
    return <double> expf(std_log(p))


def score_documents(Model model, const int64_t[::1] offsets, const uint8_t[::1] data, const uint8_t[::1] valid,
                    const int64_t[::1] lab_off, const uint8_t[::1] lab_valid, const int8_t[::1] lab_code,
                    int label, double[::1] out, uint8_t[::1] scored):
    """Per document of one chunk of a string column (``offsets``, ``data``, ``valid``) and its
    labels (``lab_off`` (documents + 1), ``lab_valid``, ``lab_code``: 1 for "good"): the
    probability of label number ``label`` into ``out`` and 1 into ``scored``; 0 into
    ``scored`` for a document with no line (null or nothing kept) or whose line gives no
    row (no word the model knows), or a NaN in fastText's arithmetic."""
    cdef const ModelData *m = &model.m
    cdef Line s
    cdef Py_ssize_t nd = valid.shape[0], di, a, e, p, q, bs, k, nlab, pi, kept, content, pos, n, last
    cdef const uint8_t *d = &data[0]
    cdef uint8_t *buf
    cdef int64_t *ends
    cdef uint8_t sep
    cdef const uint8_t *hit
    cdef uint8_t b, kind
    cdef double prob
    if offsets.shape[0] != nd + 1 or lab_off.shape[0] != nd + 1 or lab_valid.shape[0] != nd:
        raise ValueError("one offset more than documents, one label flag per document")
    if out.shape[0] < nd or scored.shape[0] < nd:
        raise ValueError("outputs shorter than the documents")
    if nd and (offsets[0] < 0 or offsets[nd] > data.shape[0]):
        raise ValueError("offsets outside the data")
    memset(&s, 0, sizeof(Line))
    try:
        s.hidden = <float *> malloc(m.dim * sizeof(float))
        s.output = <float *> malloc(m.nlabels * sizeof(float))
        s.path = <int32_t *> malloc(2 * m.nlabels * sizeof(int32_t))
        if s.hidden == NULL or s.output == NULL or s.path == NULL:
            raise MemoryError()
        for di in range(nd):
            scored[di] = 0
            a, e = offsets[di], offsets[di + 1]
            if not valid[di] or e <= a:
                continue
            nlab = -1
            if lab_valid[di]:
                nlab = lab_off[di + 1] - lab_off[di]
                if nlab < 0 or lab_off[di] < 0 or lab_off[di + 1] > lab_code.shape[0]:
                    raise ValueError("label offsets outside the codes")
            memset(s.hidden, 0, m.dim * sizeof(float))
            s.rows, s.pos, s.n_tok = 0, 0, 0
            kept = content = pi = 0
            last = 0       # where the token being read starts in buf
            p = a
            while True:
                # the paragraph [p, q): up to the next "\n\n" (str.split's)
                q = p
                while True:
                    hit = <const uint8_t *> memchr(d + q, 10, e - q) if q < e else NULL
                    if hit == NULL:
                        q = e
                        break
                    q = hit - d
                    if q + 1 < e and d[q + 1] == 10:
                        break
                    q += 1
                if nlab < 0 or (pi < nlab and lab_code[lab_off[di] + pi] == 1):
                    if kept and s.pos != last:     # the space joining two paragraphs ends a token
                        s.end[s.n_tok] = s.pos
                        s.n_tok += 1
                        last = s.pos
                    kept += 1
                    hit = <const uint8_t *> memchr(d + p, PATH_CH, q - p) if q > p else NULL
                    bs = p if hit == NULL else hit - d + 1
                    # room for every byte and a token end per byte (and one more); then
                    # each byte without a branch: copied (kept when a word byte), a token
                    # ending at a separator after word bytes
                    grow(<void **> &s.buf, &s.buf_cap, s.pos + (q - bs) + 1, 1)
                    grow(<void **> &s.end, &s.end_cap, s.n_tok + (q - bs) + 2, sizeof(int64_t))
                    buf, ends, pos, n = s.buf, s.end, s.pos, s.n_tok
                    for k in range(bs, q):
                        b = d[k]
                        kind = BYTE_CLASS[b]
                        buf[pos] = b
                        ends[n] = pos
                        pos += kind == WORD_BYTE
                        sep = kind == SEPARATOR
                        n += sep & (pos != last)
                        last ^= (last ^ pos) & -(<Py_ssize_t> sep)     # a separator: the next token starts here
                        content |= kind != MARKER
                    s.pos, s.n_tok = pos, n
                if q >= e:
                    break
                p = q + 2
                pi += 1
            if content == 0 and kept <= 1:    # an empty line: no prediction asked
                continue
            if s.pos != last:
                grow(<void **> &s.end, &s.end_cap, s.n_tok + 1, sizeof(int64_t))
                s.end[s.n_tok] = s.pos
                s.n_tok += 1
            line_rows(m, &s)
            if s.rows == 0:
                continue
            prob = probability(m, &s, label)
            if not isnan(prob):
                out[di] = prob
                scored[di] = 1
    finally:
        free(s.hidden)
        free(s.output)
        free(s.path)
        free(s.buf)
        free(s.end)
        free(s.word)
        free(s.hash)
        free(s.entry)
        free(s.ids)
        free(s.hashes)
    return None
