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

cdef uint32_t FNV_OFFSET = 2166136261U
cdef uint32_t FNV_PRIME = 16777619U
cdef uint64_t NGRAM_MUL = 116049371ULL
cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL


cdef struct ModelData:
    int dim, nwords, nlabels, word_ngrams, bucket, minn, maxn, loss
    const float *wi
    const float *wo
    const uint8_t *ebytes       # the entries' bytes, one after another
    const int64_t *eoff         # entry i: ebytes[eoff[i]:eoff[i + 1]]
    const int8_t *etype         # 0 word, 1 label
    int64_t *slot               # open addressing over the entries: entry or -1
    uint32_t *slot_hash
    int slot_bits
    const int32_t *left         # hierarchical softmax: the Huffman tree (2 * labels - 1 nodes)
    const int32_t *parent
    float sig[513]              # the one-vs-all loss's sigmoid table


cdef struct Line:
    uint8_t *tok            # "<" then the token's bytes (then ">" for its character n-grams)
    Py_ssize_t tok_len, tok_cap
    uint32_t tok_hash
    uint32_t *hashes        # the word tokens' hashes (word n-grams)
    Py_ssize_t n_hashes, hash_cap
    float *hidden
    float *output
    int32_t *path
    int64_t rows
    bint stopped            # a "</s>" token ends the line


cdef bint SEPARATOR[256]
for _b in range(256):
    SEPARATOR[_b] = _b in (0x20, 0x0A, 0x0D, 0x09, 0x0B, 0x0C, 0x00)


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


cdef inline Py_ssize_t slot_of(const ModelData *m, uint32_t h) noexcept nogil:
    return <Py_ssize_t> ((<uint64_t> h * GOLDEN) >> (64 - m.slot_bits))


cdef inline int64_t lookup(const ModelData *m, const uint8_t *w, Py_ssize_t n, uint32_t h) noexcept nogil:
    """The entry of the token ``w[:n]`` (hash ``h``), or -1."""
    cdef Py_ssize_t s = slot_of(m, h), mask = (<Py_ssize_t> 1 << m.slot_bits) - 1
    cdef int64_t e
    while True:
        e = m.slot[s]
        if e < 0:
            return -1
        if m.slot_hash[s] == h and m.eoff[e + 1] - m.eoff[e] == n and memcmp(m.ebytes + m.eoff[e], w, n) == 0:
            return e
        s = (s + 1) & mask


cdef class Model:
    """A model's arrays (``fasttext_format.FastTextFile``) with its dictionary's hash table."""
    cdef ModelData m
    cdef object keep
    cdef readonly int labels

    def __cinit__(self):
        self.m.slot = NULL
        self.m.slot_hash = NULL

    def __init__(self, const uint8_t[::1] entry_bytes, const int64_t[::1] entry_off, const int8_t[::1] types,
                 const float[:, ::1] wi, const float[:, ::1] wo, int nwords, int word_ngrams, int bucket,
                 int minn, int maxn, int loss, const int32_t[::1] left, const int32_t[::1] parent):
        cdef Py_ssize_t n = types.shape[0], i, s, size, mask
        cdef uint32_t h
        cdef int64_t e
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
        self.keep = (entry_bytes, entry_off, types, wi, wo, left, parent)
        self.labels = n - nwords
        self.m.dim, self.m.nwords, self.m.nlabels = wi.shape[1], nwords, n - nwords
        self.m.word_ngrams, self.m.bucket, self.m.minn, self.m.maxn, self.m.loss = word_ngrams, bucket, minn, maxn, loss
        self.m.wi = &wi[0, 0] if wi.shape[0] else NULL
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
        self.m.slot_bits = bits
        self.m.slot = <int64_t *> malloc(size * sizeof(int64_t))
        self.m.slot_hash = <uint32_t *> calloc(size, sizeof(uint32_t))
        if self.m.slot == NULL or self.m.slot_hash == NULL:
            raise MemoryError()
        memset(self.m.slot, 0xFF, size * sizeof(int64_t))
        for e in range(n):
            if entry_off[e + 1] < entry_off[e]:
                raise ValueError("entry offsets go back")
            h = FNV_OFFSET
            for i in range(entry_off[e], entry_off[e + 1]):
                h = fnv_step(h, entry_bytes[i])
            s = slot_of(&self.m, h)
            while self.m.slot[s] >= 0 and not (
                    self.m.slot_hash[s] == h and entry_off[self.m.slot[s] + 1] - entry_off[self.m.slot[s]]
                    == entry_off[e + 1] - entry_off[e] and memcmp(self.m.ebytes + entry_off[self.m.slot[s]],
                                                                   self.m.ebytes + entry_off[e],
                                                                   entry_off[e + 1] - entry_off[e]) == 0):
                s = (s + 1) & mask
            self.m.slot[s] = e        # a repeated entry: the last one, as fastText's
            self.m.slot_hash[s] = h

    def __dealloc__(self):
        free(self.m.slot)
        free(self.m.slot_hash)

    def label_index(self, bytes label) -> int:
        """The label's number (0 = the first label), or -1 when the model has none such."""
        cdef uint32_t h = FNV_OFFSET
        cdef Py_ssize_t i
        cdef int64_t e
        for i in range(len(label)):
            h = fnv_step(h, label[i])
        e = lookup(&self.m, <const uint8_t *> <char *> label, len(label), h)
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


cdef void char_ngrams(const ModelData *m, Line *s) noexcept nogil:
    """The rows of the character n-grams of ``<token>`` (``tok`` holds it, ``>`` included)."""
    cdef const uint8_t *w = s.tok
    cdef Py_ssize_t wl = s.tok_len + 2, i, j
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


cdef int end_token(const ModelData *m, Line *s) except -1:
    """The token in ``tok``: its rows and hash, as fastText's ``getLine`` takes it."""
    cdef Py_ssize_t n = s.tok_len
    cdef const uint8_t *w = s.tok + 1
    cdef int64_t e
    cdef int kind
    cdef bint eos
    if n == 0:
        return 0
    e = lookup(m, w, n, s.tok_hash)
    eos = n == 4 and memcmp(w, b"</s>", 4) == 0
    if e >= 0:
        kind = m.etype[e]
    else:
        kind = 1 if n >= 9 and memcmp(w, b"__label__", 9) == 0 else 0
    if kind == 0:
        if e >= 0:
            add_row(m, s, e)
        if m.maxn > 0 and not eos:
            s.tok[n + 1] = 62    # ">"
            char_ngrams(m, s)
        if m.word_ngrams > 1:
            grow(<void **> &s.hashes, &s.hash_cap, s.n_hashes + 1, sizeof(uint32_t))
            s.hashes[s.n_hashes] = s.tok_hash
            s.n_hashes += 1
    if eos:
        s.stopped = True
    s.tok_len = 0
    s.tok_hash = FNV_OFFSET
    return 0


cdef inline int push_byte(Line *s, uint8_t b) except -1:
    if s.tok_len + 2 >= s.tok_cap:   # room for "<" before and ">" after
        grow(<void **> &s.tok, &s.tok_cap, s.tok_len + 3, 1)
    s.tok[s.tok_len + 1] = b
    s.tok_len += 1
    s.tok_hash = fnv_step(s.tok_hash, b)
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


cdef int finish_line(const ModelData *m, Line *s) except -1:
    """The line's end: its last token, ``</s>``, then the word n-grams."""
    cdef Py_ssize_t i, j
    cdef uint64_t h
    end_token(m, s)
    if not s.stopped:
        push_byte(s, 60)     # "</s>"
        push_byte(s, 47)
        push_byte(s, 115)
        push_byte(s, 62)
        end_token(m, s)
    for i in range(s.n_hashes):
        h = <uint64_t> <int64_t> <int32_t> s.hashes[i]
        j = i + 1
        while j < s.n_hashes and j < i + m.word_ngrams:
            h = h * NGRAM_MUL + <uint64_t> <int64_t> <int32_t> s.hashes[j]
            add_row(m, s, m.nwords + <int64_t> (h % <uint64_t> m.bucket))
            j += 1
    return 0


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
    cdef Py_ssize_t nd = valid.shape[0], di, a, e, p, q, bs, k, nlab, pi, kept, content
    cdef const uint8_t *d = &data[0]
    cdef const uint8_t *hit
    cdef uint8_t b
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
        s.tok_cap = 256
        s.tok = <uint8_t *> malloc(s.tok_cap)
        if s.hidden == NULL or s.output == NULL or s.path == NULL or s.tok == NULL:
            raise MemoryError()
        s.tok[0] = 60   # "<"
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
            s.rows, s.n_hashes, s.tok_len, s.tok_hash, s.stopped = 0, 0, 0, FNV_OFFSET, False
            kept = content = pi = 0
            p = a
            while not s.stopped:
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
                    if kept:
                        end_token(m, &s)     # the space joining two paragraphs
                    kept += 1
                    hit = <const uint8_t *> memchr(d + p, PATH_CH, q - p) if q > p else NULL
                    bs = p if hit == NULL else hit - d + 1
                    for k in range(bs, q):
                        b = d[k]
                        if b == LINK_START or b == LINK_END:
                            continue
                        content += 1
                        if SEPARATOR[b]:
                            end_token(m, &s)
                            if s.stopped:
                                break
                        else:
                            push_byte(&s, b)
                if q >= e:
                    break
                p = q + 2
                pi += 1
            if content + kept - 1 <= 0:    # an empty line: no prediction asked
                continue
            finish_line(m, &s)
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
        free(s.tok)
        free(s.hashes)
    return None
