# The counts behind the quality metrics, from a document's plain text (its paragraphs'
# text without link markers, joined by line feeds): shared by corpus_quality.pyx (from
# a whole lake text) and corpus_step.pyx (from the per-archive step's fused pass). Needs
# corpus_common.pxi and corpus_chrome.pxi included before it.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcmp, memset
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_DecodeUTF8, PyUnicode_KIND, PyUnicode_READ, PyUnicode_FromKindAndData, Py_UNICODE_ISSPACE


cdef enum:
    NL = 10
    # the reference's class bits (quality._CLASS)
    C_SPACE = 1
    C_LETTER = 2
    C_UNIT = 4
    C_CJK = 8
    C_HIRA = 16

cdef uint32_t SPECIAL = 0xFFFFFFFFU

# quality's phrases: "javascript", then POLICY_PHRASES (13), then "lorem ipsum"
PHRASES = ("javascript", "terms of use", "privacy policy", "cookie policy", "uses cookies",
           "use of cookies", "use cookies", "プライバシーポリシー", "利用規約", "クッキー", "隐私政策",
           "使用条款", "개인정보", "이용약관", "lorem ipsum")

STOP_WORDS = ("the", "be", "to", "of", "and", "that", "have", "with")   # quality.GOPHER_STOP_WORDS

cdef uint32_t PHRASE[15][16]
cdef int PHRASE_LEN[15]
cdef uint32_t PHRASE_HEADS[128]      # per ASCII character, the phrases 0-13 it starts
cdef uint8_t PHRASE_PAIRS[65536]     # 1 where a phrase starts with these low bytes of two characters
cdef uint64_t STOP_KEY[8]       # a stop word's characters, 16 bits each
cdef uint64_t SPECIAL_KEY = 0xFFFFFFFFFFFFFFFFULL   # no stop word's key
cdef int STOP_LEN[8]
cdef uint8_t STOP_FIRST[65536]     # 1 for a stop word's first character
cdef uint64_t MIX_AT[16 * 128]     # mix(position << 21 | character) of ASCII characters at positions 0-15
cdef uint8_t CLASS[65536]
cdef uint32_t LOWER[65536]
# per ASCII character, 0x80 | its class when the character scan's body does nothing for
# it but count a non-space character (of no unit script) and copy its lower case, else 0
cdef uint8_t WORD_ASCII[128]
cdef bint CONFIGURED = False


def configure(bytes classes, list lower):
    """The reference's class table (one byte per BMP code point) and, per BMP code point,
    its lower case when that is one character and needs no context (else -1)."""
    global CONFIGURED
    cdef Py_ssize_t i, j
    if len(classes) != 65536 or len(lower) != 65536:
        raise ValueError("tables must cover the Basic Multilingual Plane")
    for i in range(128):
        PHRASE_HEADS[i] = 0
    for i in range(65536):
        PHRASE_PAIRS[i] = 0
    for i, p in enumerate(PHRASES):
        if i < 14 and ord(p[0]) < 128:
            PHRASE_HEADS[ord(p[0])] |= (<uint32_t> 1) << i
        elif i < 14 and ord(p[0]) < 0x30AF:
            raise ValueError("a phrase's first character is below U+30AF and not ASCII")
        PHRASE_LEN[i] = len(p)
        if len(p) < 2:
            raise ValueError("a phrase is shorter than two characters")
        PHRASE_PAIRS[((ord(p[0]) & 0xFF) << 8) | (ord(p[1]) & 0xFF)] = 1
        for j in range(len(p)):
            PHRASE[i][j] = ord(p[j])
    for i in range(65536):
        STOP_FIRST[i] = 0
    for i, p in enumerate(STOP_WORDS):
        STOP_FIRST[ord(p[0])] = 1
        if not 0 < len(p) <= 4 or max(map(ord, p)) > 0xFFFF:
            raise ValueError("a stop word is not one to four characters of the BMP")
        STOP_LEN[i] = len(p)
        STOP_KEY[i] = 0
        for j in range(len(p)):
            STOP_KEY[i] |= (<uint64_t> ord(p[j])) << (16 * j)
    for i in range(16 * 128):
        MIX_AT[i] = mix((<uint64_t> (i >> 7) << CP_BITS) | <uint64_t> (i & 127))
    for i in range(65536):
        CLASS[i] = classes[i]
        LOWER[i] = SPECIAL if lower[i] < 0 else <uint32_t> lower[i]
    for i in range(128):
        WORD_ASCII[i] = 0
        # not whitespace, a unit, a dot (runs of dots), a stop mark, "#", a curly bracket
        if (not CLASS[i] & (C_SPACE | C_UNIT | C_CJK | C_HIRA) and LOWER[i] != SPECIAL
                and chr(i) not in ".!?#{}"):
            WORD_ASCII[i] = 0x80 | CLASS[i]
    for i in range(0x21, 0x7F):
        # what word8 takes for granted of its characters
        if chr(i) not in ".!?#{}" and (not WORD_ASCII[i] or LOWER[i] != ord(chr(i).lower())
                                       or bool(CLASS[i] & C_LETTER) != chr(i).isalpha()):
            raise ValueError("an ASCII character's class or lower case is not as word8 takes it")
    CONFIGURED = True



cdef inline bint link_scan(uint32_t ch, bint *in_link, int64_t *link_chars) noexcept nogil:
    """One character of the scan for link markers: counts the link text's characters but
    spaces and line feeds into ``link_chars``; True for a marker (left out of the text)."""
    if in_link[0]:
        if ch == LINK_END:
            in_link[0] = False
        elif ch != 32 and ch != NL:
            link_chars[0] += 1
    elif ch == LINK_START:
        in_link[0] = True
    return ch == LINK_START or ch == LINK_END


cdef inline uint8_t cls(uint32_t c) noexcept nogil:
    if c < 65536:
        return CLASS[c]
    if 0x20000 <= c <= 0x2FFFF:   # the CJK extensions: letters, units, CJK
        return C_LETTER | C_UNIT | C_CJK
    return 0


cdef struct Buf:
    uint32_t *cp
    Py_ssize_t len


cdef struct Slot:
    uint64_t key
    int32_t n         # occurrences; the slot is used when n > 0
    int32_t first     # where the key first occurred


cdef struct Table:
    # open addressing over 64-bit keys, a slot's fields together (one cache line per probe)
    Slot *slot
    Py_ssize_t mask


# Working memory kept from one document to the next: fresh large blocks would cost the
# kernel's page clearing each time. A pass holds the GIL, but a Python call inside it (a
# chrome test, NFKC by unicodedata) can let another thread start a pass: that one gets
# working memory of its own (``work_take``).
cdef struct Work:
    void *p[20]
    size_t cap[20]


cdef Work SHARED_WORK
cdef bint SHARED_BUSY = False


cdef Work *work_take(Work *local) noexcept:
    """The shared working memory, or ``local`` (emptied) while another pass holds it."""
    global SHARED_BUSY
    if SHARED_BUSY:
        memset(local, 0, sizeof(Work))
        return local
    SHARED_BUSY = True
    return &SHARED_WORK


cdef void work_give(Work *w) noexcept:
    global SHARED_BUSY
    cdef int i
    if w == &SHARED_WORK:
        SHARED_BUSY = False
        return
    for i in range(20):
        free(w.p[i])
        w.p[i] = NULL


cdef void *scratch(Work *w, int slot, size_t size) except NULL:
    """Slot ``slot`` of the working memory, at least ``size`` bytes (contents undefined)."""
    cdef void *p
    if size < 64:
        size = 64
    if w.cap[slot] < size:
        size = max(size, 2 * w.cap[slot])
        p = realloc(w.p[slot], size)
        if p == NULL:
            raise MemoryError()
        w.p[slot], w.cap[slot] = p, size
    return w.p[slot]


cdef int table_init(Work *w, Table *t, Py_ssize_t items) except -1:
    cdef Py_ssize_t size = 16
    while size < 2 * items:
        size *= 2
    t.slot = <Slot *> scratch(w, 13, size * sizeof(Slot))
    t.mask = size - 1
    memset(t.slot, 0, size * sizeof(Slot))
    return 0


cdef void table_clear(Table *t) noexcept nogil:
    memset(t.slot, 0, (t.mask + 1) * sizeof(Slot))


cdef inline Py_ssize_t table_slot(Table *t, uint64_t k) noexcept nogil:
    """The slot holding ``k``, or the empty one where it goes."""
    cdef Py_ssize_t s = <Py_ssize_t> ((k * GOLDEN) >> 32) & t.mask
    while t.slot[s].n and t.slot[s].key != k:
        s = (s + 1) & t.mask
    return s


cdef inline Py_ssize_t table_put(Table *t, uint64_t k, Py_ssize_t pos) noexcept nogil:
    """Count one occurrence of ``k`` at ``pos``; returns its slot."""
    cdef Py_ssize_t s = table_slot(t, k)
    if not t.slot[s].n:
        t.slot[s].key = k
        t.slot[s].first = <int32_t> pos
    t.slot[s].n += 1
    return s



cdef uint64_t GOLDEN_2 = GOLDEN * GOLDEN
cdef uint64_t GOLDEN_3 = GOLDEN_2 * GOLDEN
cdef uint64_t GOLDEN_4 = GOLDEN_3 * GOLDEN


cdef inline uint64_t poly_hash(const uint32_t *cp, Py_ssize_t n) noexcept nogil:
    """A hash to find equal spans by (candidates are compared in full): h = (h + c) x GOLDEN
    per character, four characters a step (one product on the chain instead of four)."""
    cdef uint64_t h = <uint64_t> n
    cdef Py_ssize_t i = 0
    while i + 4 <= n:
        h = (h + cp[i]) * GOLDEN_4 + cp[i + 1] * GOLDEN_3 + cp[i + 2] * GOLDEN_2 + cp[i + 3] * GOLDEN
        i += 4
    while i < n:
        h = (h + cp[i]) * GOLDEN
        i += 1
    return h ^ (h >> 29)


cdef int64_t duplicates(Work *work, const uint32_t *cp, const Py_ssize_t *start, const Py_ssize_t *length,
                        const uint64_t *keys, Py_ssize_t items, int64_t *dup_chars, int64_t *chars) except -1:
    """``quality._duplicates`` over spans of ``cp`` (``keys``: their ``poly_hash``):
    occurrences after the first of an identical span, their characters, all characters
    (spans compared in full)."""
    cdef Table t
    cdef Py_ssize_t i, s
    cdef uint64_t k
    cdef int64_t dup = 0
    dup_chars[0] = 0
    chars[0] = 0
    if items == 0:
        return 0
    table_init(work, &t, items)
    for i in range(items):
        chars[0] += length[i]
        k = keys[i]
        s = <Py_ssize_t> ((k * GOLDEN) >> 32) & t.mask
        while t.slot[s].n:
            if t.slot[s].key == k and length[t.slot[s].first] == length[i] and memcmp(
                    cp + start[t.slot[s].first], cp + start[i], length[i] * sizeof(uint32_t)) == 0:
                break
            s = (s + 1) & t.mask
        if t.slot[s].n:
            dup += 1
            dup_chars[0] += length[i]
        else:
            t.slot[s].key = k
            t.slot[s].first = i
            t.slot[s].n = 1
    return dup


cdef extern from *:
    """
    #include <stdint.h>
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #define WORD8 1
    /* Eight characters of a word at once: bit k of the result set when cp[k] is printable
       ASCII but the space and . ! ? # { } (a subset of WORD_ASCII, checked by configure);
       low[0..7] get cp[0..7] with A-Z lowered (past the run too: the scan writes those
       again); bit k of *letters when cp[k] is an ASCII letter. */
    static inline unsigned word8(const uint32_t *cp, uint32_t *low, unsigned *letters) {
        __m128i a = _mm_loadu_si128((const __m128i *) cp);
        __m128i b = _mm_loadu_si128((const __m128i *) (cp + 4));
        __m128i x = _mm_packs_epi32(a, b);   /* 16-bit lanes; above 0x7FFF saturates */
        __m128i ok = _mm_and_si128(_mm_cmpgt_epi16(x, _mm_set1_epi16(0x20)),
                                   _mm_cmplt_epi16(x, _mm_set1_epi16(0x7F)));
        __m128i no = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi16(x, _mm_set1_epi16(0x2E)), _mm_cmpeq_epi16(x, _mm_set1_epi16(0x21))),
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi16(x, _mm_set1_epi16(0x3F)), _mm_cmpeq_epi16(x, _mm_set1_epi16(0x23))),
                         _mm_or_si128(_mm_cmpeq_epi16(x, _mm_set1_epi16(0x7B)), _mm_cmpeq_epi16(x, _mm_set1_epi16(0x7D)))));
        __m128i f = _mm_or_si128(x, _mm_set1_epi16(0x20));
        __m128i let = _mm_and_si128(_mm_cmpgt_epi16(f, _mm_set1_epi16(0x60)), _mm_cmplt_epi16(f, _mm_set1_epi16(0x7B)));
        __m128i up_a = _mm_and_si128(_mm_cmpgt_epi32(a, _mm_set1_epi32(0x40)), _mm_cmplt_epi32(a, _mm_set1_epi32(0x5B)));
        __m128i up_b = _mm_and_si128(_mm_cmpgt_epi32(b, _mm_set1_epi32(0x40)), _mm_cmplt_epi32(b, _mm_set1_epi32(0x5B)));
        _mm_storeu_si128((__m128i *) low, _mm_add_epi32(a, _mm_and_si128(up_a, _mm_set1_epi32(0x20))));
        _mm_storeu_si128((__m128i *) (low + 4), _mm_add_epi32(b, _mm_and_si128(up_b, _mm_set1_epi32(0x20))));
        *letters = (unsigned) _mm_movemask_epi8(_mm_packs_epi16(let, _mm_setzero_si128())) & 0xFF;
        return (unsigned) _mm_movemask_epi8(_mm_packs_epi16(_mm_andnot_si128(no, ok), _mm_setzero_si128())) & 0xFF;
    }
    #else
    #define WORD8 0
    static inline unsigned word8(const uint32_t *cp, uint32_t *low, unsigned *letters) { return 0; }
    #endif
    """
    bint WORD8
    unsigned word8(const uint32_t *cp, uint32_t *low, unsigned *letters) noexcept nogil
    int __builtin_ctz(unsigned x) noexcept nogil


cdef inline Py_ssize_t ascii_word(const uint32_t *cp, uint32_t *low, Py_ssize_t i, Py_ssize_t n,
                                  uint8_t *cl) noexcept nogil:
    """The end of the run of ``WORD_ASCII`` characters from ``i``: their lower case put in
    ``low``, their classes or-ed into ``cl``. Eight at a time where the processor allows:
    a word's end is then found without a branch per character (words end at random)."""
    cdef uint32_t ch
    cdef uint8_t w
    cdef unsigned m, letters, k
    if WORD8:
        while i + 8 <= n:
            m = word8(cp + i, low + i, &letters)
            k = <unsigned> __builtin_ctz(~m)      # the run's characters among the eight
            if letters & ((1U << k) - 1):
                cl[0] |= C_LETTER
            i += k
            if k < 8:
                break
    while i < n:
        ch = cp[i]
        if ch >= 128:
            break
        w = WORD_ASCII[ch]
        if not w:
            break
        cl[0] |= w
        low[i] = LOWER[ch]
        i += 1
    return i


cdef inline bint is_terminal(uint32_t c) noexcept nogil:
    # quality.TERMINAL_PUNCT
    return (c == 0x2E or c == 0x21 or c == 0x3F or c == 0x3002 or c == 0xFF01 or c == 0xFF1F
            or c == 0xFF0E or c == 0xFF61 or c == 0x300D or c == 0x300F or c == 0x061F
            or c == 0x0964 or c == 0x0965 or c == 0x0589 or c == 0x1362 or c == 0x104B
            or c == 0x05C3)


cdef inline bint is_word_punct(uint32_t c) noexcept nogil:
    # quality.WORD_PUNCT: ASCII punctuation, quotes, dashes, the ellipsis, ¡ ¿ ·
    if c < 128:
        return 33 <= c <= 47 or 58 <= c <= 64 or 91 <= c <= 96 or 123 <= c <= 126
    return (c == 0x201C or c == 0x201D or c == 0x2018 or c == 0x2019 or c == 0xAB or c == 0xBB
            or c == 0x201E or c == 0x201A or c == 0x2039 or c == 0x203A or c == 0x2026
            or c == 0x2013 or c == 0x2014 or c == 0xA1 or c == 0xBF or c == 0xB7)


cdef inline bint is_bullet_char(uint32_t c) noexcept nogil:
    # the one-character members of quality.BULLETS
    return (c == 0x2022 or c == 0x2023 or c == 0x25CF or c == 0x25CB or c == 0x25E6
            or c == 0x25AA or c == 0x25AB or c == 0x25A0 or c == 0x25A1 or c == 0x25BA
            or c == 0x25B6 or c == 0x27A2 or c == 0x27A4 or c == 0x2713 or c == 0x2714
            or c == 0x30FB or c == 0xB7 or c == 0x2192)


cdef inline bint is_bullet_head(uint32_t c) noexcept nogil:
    # the first characters of the two-character members ("- ", "* ", "– ", "— ")
    return c == 0x2D or c == 0x2A or c == 0x2013 or c == 0x2014


cdef inline bint ends_with_ellipsis(const uint32_t *cp, Py_ssize_t n) noexcept nogil:
    # quality.ELLIPSES: "...", "…", "．．．", "・・・"
    cdef uint32_t c
    if n == 0:
        return False
    c = cp[n - 1]
    if c == 0x2026:
        return True
    if n >= 3 and (c == 0x2E or c == 0xFF0E or c == 0x30FB):
        return cp[n - 2] == c and cp[n - 3] == c
    return False


cdef inline bint is_cjk_stop(uint32_t c) noexcept nogil:
    return c == 0x3002 or c == 0xFF01 or c == 0xFF1F or c == 0xFF61


cdef inline bint is_stop_mark(uint32_t c) noexcept nogil:
    return c == 0x2E or c == 0x21 or c == 0x3F or c == 0x061F or c == 0x0964


cdef inline bint is_closing(uint32_t c) noexcept nogil:
    return (c == 0x22 or c == 0x27 or c == 0x201D or c == 0x2019 or c == 0xBB or c == 0x300D
            or c == 0x300F or c == 0x29)


cdef inline bint ends_sentence(const uint32_t *cp, Py_ssize_t lf, Py_ssize_t ll) noexcept nogil:
    """``quality.ends_sentence`` of the line cp[lf:ll + 1]: a terminal mark at its end,
    closing marks after it allowed."""
    if is_terminal(cp[ll]):
        return True
    while ll >= lf and is_closing(cp[ll]):
        ll -= 1
    return ll >= lf and is_terminal(cp[ll])


cdef inline uint32_t phrases_from(uint32_t c) noexcept nogil:
    """Bit k set when phrase k (0-13) starts with ``c``."""
    cdef int k
    cdef uint32_t heads = 0
    if c < 128:
        return PHRASE_HEADS[c]
    if c < 0x30AF:
        return 0
    for k in range(1, 14):
        if PHRASE[k][0] == c:
            heads |= (<uint32_t> 1) << k
    return heads


cdef inline void phrases_at(const uint32_t *low, Py_ssize_t i, Py_ssize_t n, bint *found_js,
                            bint *found_policy, int64_t *lorem) noexcept nogil:
    """The phrases at ``low[i]`` of the lower-case text's ``n`` characters: "lorem ipsum"
    counted, javascript or a policy found (each once a line)."""
    cdef uint32_t ch = low[i], heads
    cdef int k
    if ch == 0x6C and i + PHRASE_LEN[14] <= n and memcmp(low + i, PHRASE[14], PHRASE_LEN[14] * sizeof(uint32_t)) == 0:
        lorem[0] += 1
    heads = phrases_from(ch)
    for k in range(14):
        if not (heads >> k) & 1 or (found_js[0] if k == 0 else found_policy[0]) or i + PHRASE_LEN[k] > n:
            continue
        if memcmp(low + i, PHRASE[k], PHRASE_LEN[k] * sizeof(uint32_t)) == 0:
            if k == 0:
                found_js[0] = True
            else:
                found_policy[0] = True


cdef inline Py_ssize_t ascii_unit(const uint32_t *low, Py_ssize_t i, Py_ssize_t n, Py_ssize_t us, uint64_t *acc,
                                  bint *found_js, bint *found_policy, int64_t *lorem) noexcept nogil:
    """The end of the run of ASCII characters but whitespace from ``i`` in the unit that
    started at ``us`` (ASCII is of no unit script): their terms added to the unit's text
    hash ``acc``, the phrases at each of them looked for."""
    cdef uint64_t h = acc[0]
    cdef uint32_t ch
    while i < n:
        ch = low[i]
        if ch >= 128 or CLASS[ch] & C_SPACE:
            break
        h += mix_at(i - us, ch)
        # (a rare match of the pair: no branch to mispredict on the first character alone)
        if i + 1 < n and PHRASE_PAIRS[(ch << 8) | (low[i + 1] & 0xFF)]:
            phrases_at(low, i, n, found_js, found_policy, lorem)
        i += 1
    acc[0] = h
    return i


cdef void ngram_shares(const uint64_t *ids, const int64_t *csum, Py_ssize_t w, int scale,
                       uint64_t *h, Table *t, int64_t *top_num, int64_t *dup_chars,
                       char *rep, int32_t *cand, int32_t *cslot) noexcept nogil:
    """``quality._ngram_shares`` as whole numbers: ``top_num[n-2]`` (n = 2..4) the
    numerator of ``top_{n}gram_char_share`` (count x characters), ``dup_chars[n-5]``
    (n = 5..10) the characters covered by later occurrences; -1 where the reference
    leaves the metric at 0 without measuring.

    Only an n-gram that occurs twice can change a measure, and every occurrence of one
    starts where the shorter n-grams measured before it (at its start, and at its end
    less their length) occur twice too: each length counts only those candidates, in a
    table of their own size, and marks which of them repeat for the next length."""
    cdef Py_ssize_t n, i, glen, span, kk, s, cnt, nrep, e, lo, f, size, x, prev_n = 0, step, k2
    cdef bint keep
    cdef int64_t top, best, c, v
    cdef uint64_t mul = GOLDEN
    for kk in range(3):
        top_num[kk] = -1
    for kk in range(6):
        dup_chars[kk] = -1
    if w < 2:
        return
    for i in range(w):
        h[i] = ids[i]
        cand[i] = <int32_t> i
        rep[i] = 0
    cnt = w
    # n-gram hashes of n units, built up as the reference does (wrapping modulo 2**64) at
    # the candidates; at every n that is a multiple of ``scale`` the measures of n // scale
    # are taken
    n = 1
    while n < 10 * scale:
        n += 1
        if w < n:
            break
        glen = w - n + 1
        for x in range(cnt):
            i = cand[x]
            if i < glen:
                h[i] = h[i] * mul + ids[i + n - 1]
        if n % scale:
            continue
        kk = n // scale
        span = n
        if kk < 2:
            continue
        if prev_n == 0:
            cnt = glen
        else:
            # the candidates left (in order, in place), their marks cleared as they are read
            step = n - prev_n
            k2 = 0
            for x in range(cnt):
                i = cand[x]
                keep = i < glen and rep[i] and rep[i + step]
                rep[i] = 0
                if keep:
                    cand[k2] = <int32_t> i
                    k2 += 1
            cnt = k2
        size = 16
        while size < 2 * cnt:
            size *= 2
        t.mask = size - 1
        table_clear(t)
        # in order: the most frequent n-gram's count and, among the n-grams of that count,
        # the most characters at a first occurrence, kept up as the counts come; a later
        # occurrence covers its n-gram's characters
        top = best = 0
        c = 0
        e = 0
        for x in range(cnt):
            i = cand[x]
            s = table_put(t, h[i], i)
            cslot[x] = <int32_t> s
            if kk <= 4:
                if t.slot[s].n >= top:
                    f = t.slot[s].first
                    v = csum[f + span] - csum[f]
                    if t.slot[s].n > top:
                        top, best = t.slot[s].n, v
                    elif v > best:
                        best = v
            elif t.slot[s].n > 1:
                lo = i if i > e else e
                if i + span > lo:
                    c += csum[i + span] - csum[lo]
                    e = i + span
        nrep = 0
        for x in range(cnt):
            if t.slot[cslot[x]].n > 1:
                rep[cand[x]] = 1
                nrep += 1
        if kk <= 4:
            top_num[kk - 2] = top * best if top > 1 else 0
        elif kk == 5 and nrep < 2:
            return
        else:
            dup_chars[kk - 5] = c
        prev_n = n


cdef inline uint64_t mix_at(Py_ssize_t k, uint32_t c) noexcept nogil:
    """``mix(k << 21 | c)``, the term of character ``c`` at position ``k`` of a text hash
    (by one look-up for the first positions of ASCII characters: units are short)."""
    if k < 16 and c < 128:
        return MIX_AT[(k << 7) | c]
    return mix((<uint64_t> k << CP_BITS) | c)


# A document's counts row: the enum gives each count its slot, in row order; the table
# below pairs each slot with its name and width, and ``COUNTS`` is made from it, so the row
# is written and read by name. A table out of the enum's order fails at import
# (``_row_names``); the suite checks each name stands beside its own slot (AT_ + NAME).
cdef enum:
    N_TOP = 3                       # "top" of n = 2..4
    N_DUP = 6                       # "dup" of n = 5..10

cdef enum:
    AT_CHAR_MODE
    AT_PARAGRAPHS
    AT_NONSPACE
    AT_UNITS
    AT_SYMBOLS
    AT_LINES
    AT_BULLET_LINES
    AT_ELLIPSIS_LINES
    AT_LETTERED
    AT_STOP_WORDS
    AT_DUP_LINES
    AT_DUP_LINE_CHARS
    AT_LINE_CHARS
    AT_NONEMPTY_PARAGRAPHS
    AT_DUP_PARAGRAPHS
    AT_DUP_PARAGRAPH_CHARS
    AT_PARAGRAPH_CHARS
    AT_UNIT_CHARS
    AT_TOP
    AT_DUP = AT_TOP + N_TOP
    AT_TERMINAL_LINES = AT_DUP + N_DUP
    AT_SENTENCES
    AT_SHORT_LINES
    AT_JAVASCRIPT_LINES
    AT_POLICY_LINES
    AT_LOREM_IPSUM
    AT_CURLY_BRACKETS
    AT_CJK
    AT_HIRAGANA
    AT_LINK_CHARS
    AT_BODY_CHARS
    AT_LABELS_FIT                   # with "char_mode", the counts that are yes or no
    AT_BAD_CHARS
    AT_CHROME_CHARS
    AT_PATH_ELEMENTS
    N_COUNTS


cdef tuple _row_names(tuple slots):
    """Each slot's name, as many times as it is wide; ``slots`` must follow the row."""
    cdef list names = []
    for at, name, width in slots:
        if at != len(names):
            raise ImportError(f"the counts row's table puts {name!r} at {at}, not {len(names)}")
        names.extend([name] * width)
    if len(names) != N_COUNTS:
        raise ImportError(f"the counts row's table names {len(names)} slots, not {N_COUNTS}")
    return tuple(names)


# The counts in the order ``plain_counts`` writes them; ``counts_dict`` gives them by name.
COUNTS = _row_names((
    (AT_CHAR_MODE, "char_mode", 1), (AT_PARAGRAPHS, "paragraphs", 1), (AT_NONSPACE, "nonspace", 1),
    (AT_UNITS, "units", 1), (AT_SYMBOLS, "symbols", 1), (AT_LINES, "lines", 1),
    (AT_BULLET_LINES, "bullet_lines", 1), (AT_ELLIPSIS_LINES, "ellipsis_lines", 1),
    (AT_LETTERED, "lettered", 1), (AT_STOP_WORDS, "stop_words", 1), (AT_DUP_LINES, "dup_lines", 1),
    (AT_DUP_LINE_CHARS, "dup_line_chars", 1), (AT_LINE_CHARS, "line_chars", 1),
    (AT_NONEMPTY_PARAGRAPHS, "nonempty_paragraphs", 1), (AT_DUP_PARAGRAPHS, "dup_paragraphs", 1),
    (AT_DUP_PARAGRAPH_CHARS, "dup_paragraph_chars", 1), (AT_PARAGRAPH_CHARS, "paragraph_chars", 1),
    (AT_UNIT_CHARS, "unit_chars", 1), (AT_TOP, "top", N_TOP), (AT_DUP, "dup", N_DUP),
    (AT_TERMINAL_LINES, "terminal_lines", 1), (AT_SENTENCES, "sentences", 1),
    (AT_SHORT_LINES, "short_lines", 1), (AT_JAVASCRIPT_LINES, "javascript_lines", 1),
    (AT_POLICY_LINES, "policy_lines", 1), (AT_LOREM_IPSUM, "lorem_ipsum", 1),
    (AT_CURLY_BRACKETS, "curly_brackets", 1), (AT_CJK, "cjk", 1), (AT_HIRAGANA, "hiragana", 1),
    (AT_LINK_CHARS, "link_chars", 1), (AT_BODY_CHARS, "body_chars", 1), (AT_LABELS_FIT, "labels_fit", 1),
    (AT_BAD_CHARS, "bad_chars", 1), (AT_CHROME_CHARS, "chrome_chars", 1),
    (AT_PATH_ELEMENTS, "path_elements", 1)))


cdef dict counts_dict(const int64_t *row):
    """The counts of one document by name (``quality._metrics_from_counts``'s input)."""
    cdef dict out = {}
    cdef Py_ssize_t k
    for k in range(N_COUNTS):
        if k == AT_TOP:
            out["top"] = [row[AT_TOP + j] for j in range(N_TOP)]
        elif k == AT_DUP:
            out["dup"] = [row[AT_DUP + j] for j in range(N_DUP)]
        elif not AT_TOP < k < AT_DUP + N_DUP:
            out[COUNTS[k]] = bool(row[k]) if k == AT_CHAR_MODE or k == AT_LABELS_FIT else row[k]
    return out


cdef int plain_counts(Work *work, uint32_t *plain_cp, Py_ssize_t plain_len, Py_ssize_t *pstart, Py_ssize_t *plen,
                      Py_ssize_t nchunks, bint lang_units, bint english, int64_t link_chars,
                      int64_t chrome_chars, int64_t depth, int64_t total, bint labels_fit,
                      int64_t bad_chars, int64_t *row) except -1:
    """The counts of ``document_counts`` from the plain text (``plain_cp``: the paragraphs'
    bodies without link markers joined by line feeds, in working memory slot 1), its
    paragraphs (``pstart``/``plen`` in slots 3 and 4: where each body is in it) and what
    only the whole text gives (link characters, chrome characters, path elements, body
    characters, labels).

    Two scans: the plain text (characters, words, lines and what each line ends or starts
    with, lower case) and its lower case (units and their hashes, phrases). What depends on
    whether the text is measured in units, known only at its end, is counted both ways."""
    cdef Py_ssize_t i, k, a, ne = 0, nlines = 0, w = 0, lf = -1, ll = 0, us = -1, L
    cdef uint64_t key, acc = 0
    cdef uint32_t ch, run_ch
    cdef uint8_t cl, word_cl
    cdef bint char_mode, space, prev_space, prev_unit, unit, special = False, in_close = False, ns, letter, new_word
    cdef uint32_t lw
    cdef uint8_t kind[32]
    cdef uint8_t kd
    cdef bint found_js = False, found_policy = False
    cdef int64_t nonspace = 0, cjk = 0, hira = 0, units_script = 0, lettered = 0
    cdef int64_t tokens = 0, last_lettered = -1, tokens_u = 0, last_lettered_u = -1, lettered_u = 0, run = 0, symbols = 0, bullets = 0, ell = 0
    cdef int64_t lcurly = 0, curly_c = 0, curly_w = 0
    cdef bint line_ell
    cdef int64_t terminal = 0, short15 = 0, short30 = 0, sent_c = 0, sent_w = 0, lse = 0, sp = 0, sp_f = 0, sp_l = 0
    cdef int64_t stop = 0, total_units
    cdef Py_ssize_t w_all
    cdef int64_t dl, dl_chars, l_chars, dp, dp_chars, p_chars
    cdef int64_t js_lines = 0, policy_lines = 0, lorem = 0
    cdef uint32_t heads
    cdef Buf plain, low
    cdef Py_ssize_t *lstart = NULL
    cdef Py_ssize_t *llen = NULL
    cdef Py_ssize_t *ustart = NULL
    cdef Py_ssize_t *ulen = NULL
    cdef uint64_t *ids = NULL
    cdef uint64_t *lkeys = NULL
    cdef uint64_t *pkeys = NULL
    cdef uint64_t *hbuf = NULL
    cdef int64_t *csum = NULL
    cdef char *rep = NULL
    cdef int32_t *cand = NULL
    cdef int32_t *cslot = NULL
    cdef Table t
    cdef int64_t top_num[N_TOP]
    cdef int64_t dup_chars[N_DUP]
    cdef object low_str
    plain.cp, plain.len = plain_cp, plain_len
    low.cp = <uint32_t *> scratch(work, 2, (plain.len + 1) * sizeof(uint32_t))
    low.len = plain.len
    lstart = <Py_ssize_t *> scratch(work, 5, (plain.len + 1) * sizeof(Py_ssize_t))
    llen = <Py_ssize_t *> scratch(work, 6, (plain.len + 1) * sizeof(Py_ssize_t))
    # characters, and words (units) holding a letter, as quality._char_stats counts them:
    # tokens counted both ways (words; units), as the mode depends on the whole text; runs
    # of dots counted as str.count counts "...": each run of k gives k // 3. Lines (cut at
    # "\n", stripped, the empty ones left out) as they end: where the stripped line starts
    # and ends (``lf``, ``ll``), the spaces between (``sp``), the sentence ends in it
    # (``quality._SENTENCE_END``: a stop mark and its closing quotes followed by
    # whitespace or the line's end, ``in_close`` while in them; ``lse``)
    prev_space = True
    prev_unit = False
    run_ch = 0
    run = 0
    i = 0
    while True:
        ch = plain.cp[i] if i < plain.len else NL
        if i == plain.len or ch == NL:
            if lf >= 0:
                L = ll + 1 - lf
                lstart[nlines], llen[nlines] = lf, L
                nlines += 1
                ch = plain.cp[lf]
                if is_bullet_char(ch) or (is_bullet_head(ch) and L >= 2 and plain.cp[lf + 1] == 32):
                    bullets += 1
                line_ell = ends_with_ellipsis(plain.cp + lf, L)
                ell += line_ell
                short15 += L <= 15
                short30 += L <= 30
                if ends_sentence(plain.cp, lf, ll):
                    terminal += 1
                    lse += in_close
                    if L >= 5 and not line_ell:
                        sent_c += lse
                        curly_c += lcurly
                    if sp_l - sp_f >= 2 and not line_ell:
                        sent_w += lse
                        curly_w += lcurly
            lf = -1
            in_close = False
            lse = 0
            lcurly = 0
            if i == plain.len:
                break
            ch = NL
        elif ch == 32:
            # a space (one character in seven): what the body below does for it; and a word
            # of plain ASCII after it at once (most words)
            if run:
                symbols += run // 3
                run_ch, run = 0, 0
            if in_close:
                in_close = False
                lse += 1
            sp += 1
            prev_space, prev_unit = True, False
            low.cp[i] = 32
            i += 1
            if i < plain.len and plain.cp[i] < 128 and WORD_ASCII[plain.cp[i]]:
                a = i
                word_cl = 0
                i = ascii_word(plain.cp, low.cp, i, plain.len, &word_cl)
                tokens += 1
                tokens_u += 1
                if word_cl & C_LETTER:
                    lettered += 1
                    last_lettered = tokens
                    lettered_u += 1
                    last_lettered_u = tokens_u
                nonspace += i - a
                if lf < 0:
                    lf, sp_f = a, sp
                ll, sp_l = i - 1, sp
                prev_space = False
            continue
        # without a branch on whether the character is a space (words and spaces alternate
        # at random): the counts add 0 or 1
        cl = cls(ch)
        space = (cl & C_SPACE) != 0
        ns = not space
        unit = (cl & C_UNIT) != 0
        units_script += unit      # U+3000 included, a space of a unit script
        if ch == 0x2E or ch == 0xFF0E or ch == 0x30FB:
            if ch != run_ch:
                symbols += run // 3
                run_ch, run = ch, 0
            run += 1
        elif run:
            symbols += run // 3
            run_ch, run = 0, 0
        tokens += ns & prev_space
        tokens_u += ns & (prev_space | prev_unit | unit)
        letter = ns & ((cl & C_LETTER) != 0)
        new_word = letter & (tokens != last_lettered)
        lettered += new_word
        last_lettered = tokens if new_word else last_lettered
        new_word = letter & (tokens_u != last_lettered_u)
        lettered_u += new_word
        last_lettered_u = tokens_u if new_word else last_lettered_u
        nonspace += ns
        cjk += ns & ((cl & C_CJK) != 0)
        hira += ns & ((cl & C_HIRA) != 0)
        lw = LOWER[ch] if ch <= 0xFFFF else SPECIAL
        special |= ns & (lw == SPECIAL)
        low.cp[i] = lw if ch <= 0xFFFF else ch
        if ch == 0x23 or ch == 0x2026:
            symbols += 1
        elif ch == 0x7B:
            lcurly += 1
        if ns and lf < 0:
            lf, sp_f = i, sp
        ll = i if ns else ll
        sp_l = sp if ns else sp_l
        sp += ch == 32
        prev_space, prev_unit = space, unit
        # (a line feed never gets here in a closing run: the line's end cleared it)
        if in_close or ch >= 0x80 or ch == 0x2E or ch == 0x21 or ch == 0x3F:
            if not (in_close and is_closing(ch)):
                if in_close:
                    in_close = False
                    lse += space
                if is_cjk_stop(ch):
                    lse += 1
                elif is_stop_mark(ch):
                    in_close = True
        i += 1
        if ns and not unit and not in_close and not run:
            # the rest of a word of plain ASCII at once: no word, unit or line starts in it
            a = i
            word_cl = 0
            i = ascii_word(plain.cp, low.cp, i, plain.len, &word_cl)
            if i > a:
                nonspace += i - a
                ll = i - 1
                if word_cl & C_LETTER:
                    if tokens != last_lettered:
                        lettered += 1
                        last_lettered = tokens
                    if tokens_u != last_lettered_u:
                        lettered_u += 1
                        last_lettered_u = tokens_u
    symbols += run // 3
    char_mode = bool(lang_units) or (plain.len > 0 and 2 * units_script >= nonspace)
    if char_mode:
        lettered = lettered_u
    lkeys = <uint64_t *> scratch(work, 18, (nlines + 1) * sizeof(uint64_t))
    for i in range(nlines):
        lkeys[i] = poly_hash(plain.cp + lstart[i], llen[i])
    dl = duplicates(work, plain.cp, lstart, llen, lkeys, nlines, &dl_chars, &l_chars)
    # the non-empty paragraphs, packed to the front of the arrays; a paragraph that is one
    # line as it stands (most) has that line's hash
    pkeys = <uint64_t *> scratch(work, 19, (nchunks + 1) * sizeof(uint64_t))
    ne = 0
    a = 0
    for i in range(nchunks):
        if plen[i]:
            pstart[ne], plen[ne] = pstart[i], plen[i]
            while a < nlines and lstart[a] < pstart[ne]:
                a += 1
            if a < nlines and lstart[a] == pstart[ne] and llen[a] == plen[ne]:
                pkeys[ne] = lkeys[a]
            else:
                pkeys[ne] = poly_hash(plain.cp + pstart[ne], plen[ne])
            ne += 1
    dp = duplicates(work, plain.cp, pstart, plen, pkeys, ne, &dp_chars, &p_chars)
    # lower case: by the table (above), or str.lower where a character needs more
    if special:
        low_str = PyUnicode_FromKindAndData(4, plain.cp, plain.len).lower()
        low.cp = <uint32_t *> scratch(work, 2, (len(low_str) + 1) * sizeof(uint32_t))
        low.len = len(low_str)
        for i in range(low.len):
            low.cp[i] = PyUnicode_READ(PyUnicode_KIND(low_str), PyUnicode_DATA(low_str), i)
    # units of the lower-case text (runs of non-space characters, and in units each
    # character of a unit script on its own) with their text hashes and the characters
    # before each; lines naming javascript or a policy (lines of the lower-case text match
    # those of the text: lower case neither makes nor removes a line feed; no phrase holds
    # one), "lorem ipsum" (it cannot overlap itself: every match counts)
    ustart = <Py_ssize_t *> scratch(work, 7, (low.len + 1) * sizeof(Py_ssize_t))
    ulen = <Py_ssize_t *> scratch(work, 8, (low.len + 1) * sizeof(Py_ssize_t))
    ids = <uint64_t *> scratch(work, 9, (low.len + 1) * sizeof(uint64_t))
    csum = <int64_t *> scratch(work, 11, (low.len + 2) * sizeof(int64_t))
    csum[0] = 0
    for k in range(32):     # per class: 0 part of a unit, 1 whitespace, 2 a unit alone
        kind[k] = 2 if char_mode and k & C_UNIT else (1 if k & C_SPACE else 0)
    i = 0
    while True:
        if i < low.len:
            ch = low.cp[i]
            kd = kind[cls(ch) & 31]
        else:
            ch, kd = 32, 1
        if kd:
            if us >= 0:      # the unit ends
                L = i - us
                ustart[w], ulen[w] = us, L
                ids[w] = mix(acc + <uint64_t> L * LEN_MUL + HASH_SEED)
                csum[w + 1] = csum[w] + L
                w += 1
                us = -1
            if i == low.len:
                break
            if kd == 1:     # whitespace
                if ch == NL:
                    js_lines += found_js
                    policy_lines += found_policy
                    found_js = found_policy = False
                i += 1
                if i < low.len and low.cp[i] < 128 and not CLASS[low.cp[i]] & C_SPACE:
                    # a unit of ASCII characters starts (most units)
                    us, acc = i, 0
                    i = ascii_unit(low.cp, i, low.len, us, &acc, &found_js, &found_policy, &lorem)
                continue
            ustart[w], ulen[w] = i, 1      # a character of a unit script, a unit alone
            ids[w] = mix(mix_at(0, ch) + LEN_MUL + HASH_SEED)
            csum[w + 1] = csum[w] + 1
            w += 1
        else:
            if us < 0:
                us, acc = i, 0
            acc += mix_at(i - us, ch)
        if i + 1 < low.len and PHRASE_PAIRS[((ch & 0xFF) << 8) | (low.cp[i + 1] & 0xFF)]:
            phrases_at(low.cp, i, low.len, &found_js, &found_policy, &lorem)
        i += 1
        if not kd:
            i = ascii_unit(low.cp, i, low.len, us, &acc, &found_js, &found_policy, &lorem)
    js_lines += found_js
    policy_lines += found_policy
    w_all = w
    if not char_mode:
        # words compared without the punctuation around them; one of nothing else is left
        # out of the n-grams (quality.WORD_PUNCT)
        k = 0
        for i in range(w):
            a, L = ustart[i], ustart[i] + ulen[i]
            while a < L and is_word_punct(low.cp[a]):
                a += 1
            while L > a and is_word_punct(low.cp[L - 1]):
                L -= 1
            if a == L:
                continue
            ids[k] = text_hash(low.cp + a, L - a) if a != ustart[i] or L - a != ulen[i] else ids[i]
            ustart[k], ulen[k] = a, L - a
            csum[k + 1] = csum[k] + (L - a)
            k += 1
        w = k
    if english:
        for i in range(w):
            if ulen[i] > 4 or low.cp[ustart[i]] > 0xFFFF or not STOP_FIRST[low.cp[ustart[i]]]:
                continue
            # the unit's (at most four) characters side by side, as STOP_KEY holds the words
            key = 0
            for a in range(ulen[i]):
                ch = low.cp[ustart[i] + a]
                if ch > 0xFFFF:
                    key = SPECIAL_KEY
                    break
                key |= (<uint64_t> ch) << (16 * a)
            for k in range(8):
                if STOP_KEY[k] == key and STOP_LEN[k] == ulen[i]:
                    stop += 1
                    break
    # the n-gram measures over the units' hashes and lengths
    hbuf = <uint64_t *> scratch(work, 10, (w + 1) * sizeof(uint64_t))
    rep = <char *> scratch(work, 12, w + 1)
    cand = <int32_t *> scratch(work, 16, (w + 1) * sizeof(int32_t))
    cslot = <int32_t *> scratch(work, 17, (w + 1) * sizeof(int32_t))
    total_units = csum[w]
    if w >= 2 and total_units:
        table_init(work, &t, w)
        ngram_shares(ids, csum, w, 2 if char_mode else 1, hbuf, &t, top_num, dup_chars, rep, cand, cslot)
    else:
        for k in range(N_TOP):
            top_num[k] = -1
        for k in range(N_DUP):
            dup_chars[k] = -1
    cdef int64_t *r = row
    r[AT_CHAR_MODE] = char_mode
    r[AT_PARAGRAPHS] = nchunks
    r[AT_NONSPACE] = nonspace
    r[AT_UNITS] = w_all
    r[AT_SYMBOLS] = symbols
    r[AT_LINES] = nlines
    r[AT_BULLET_LINES] = bullets
    r[AT_ELLIPSIS_LINES] = ell
    r[AT_LETTERED] = lettered
    r[AT_STOP_WORDS] = stop
    r[AT_DUP_LINES] = dl
    r[AT_DUP_LINE_CHARS] = dl_chars
    r[AT_LINE_CHARS] = l_chars
    r[AT_NONEMPTY_PARAGRAPHS] = ne
    r[AT_DUP_PARAGRAPHS] = dp
    r[AT_DUP_PARAGRAPH_CHARS] = dp_chars
    r[AT_PARAGRAPH_CHARS] = p_chars
    r[AT_UNIT_CHARS] = total_units
    for k in range(N_TOP):
        r[AT_TOP + k] = top_num[k]
    for k in range(N_DUP):
        r[AT_DUP + k] = dup_chars[k]
    r[AT_TERMINAL_LINES] = terminal
    r[AT_SENTENCES] = sent_c if char_mode else sent_w
    r[AT_SHORT_LINES] = short15 if char_mode else short30
    r[AT_JAVASCRIPT_LINES] = js_lines
    r[AT_POLICY_LINES] = policy_lines
    r[AT_LOREM_IPSUM] = lorem
    r[AT_CURLY_BRACKETS] = curly_c if char_mode else curly_w
    r[AT_CJK] = cjk
    r[AT_HIRAGANA] = hira
    r[AT_LINK_CHARS] = link_chars
    r[AT_BODY_CHARS] = total
    r[AT_LABELS_FIT] = labels_fit
    r[AT_BAD_CHARS] = bad_chars
    r[AT_CHROME_CHARS] = chrome_chars
    r[AT_PATH_ELEMENTS] = depth
    return 0


cdef inline Py_ssize_t element_end(int kind, const void *data, Py_ssize_t i, Py_ssize_t e) noexcept:
    """End of the path element starting at i (its '>' or the path's end e)."""
    while i < e and PyUnicode_READ(kind, data, i) != 0x3E:
        i += 1
    return i


cdef inline bint same_key(int kind, const void *data, Py_ssize_t a, Py_ssize_t ae, Py_ssize_t b,
                          Py_ssize_t be) noexcept:
    """Whether the elements data[a:ae] and data[b:be] are equal once their ASCII digits
    are left out (``quality.chrome_chars_past_frame``'s element keys)."""
    cdef uint32_t x, y
    while True:
        while a < ae and 0x30 <= PyUnicode_READ(kind, data, a) <= 0x39:
            a += 1
        while b < be and 0x30 <= PyUnicode_READ(kind, data, b) <= 0x39:
            b += 1
        if a == ae or b == be:
            return a == ae and b == be
        x = PyUnicode_READ(kind, data, a)
        y = PyUnicode_READ(kind, data, b)
        if x != y:
            return False
        a += 1
        b += 1


cdef int64_t chrome_past_frame(int kind, const void *data, Py_ssize_t *fr, const Py_ssize_t *w, Py_ssize_t n,
                               int64_t total, object is_chrome, dict cache) except -1:
    """``quality.chrome_chars_past_frame`` of n paragraphs of w[i] characters whose CSS
    paths are data[fr[4i]:fr[4i + 1]] (code points for kind 4, UTF-8 bytes for kind 1);
    fr[4i + 2] and fr[4i + 3] are working space. The frame's element at each depth is
    found by a weighted majority vote, then its characters are counted."""
    cdef Py_ssize_t i, s, e, cand, cs = 0, ce = 0
    cdef int64_t count, held, chrome = 0
    cdef int r
    cdef object path, hit
    for i in range(n):
        fr[4 * i + 2] = fr[4 * i + 3] = fr[4 * i]   # next element on the frame; first past it
    while total > 0:
        cand, count = -1, 0
        for i in range(n):
            s = fr[4 * i + 2]
            if s < 0 or s > fr[4 * i + 1]:
                continue
            e = element_end(kind, data, s, fr[4 * i + 1])
            if cand >= 0 and same_key(kind, data, s, e, cs, ce):
                count += w[i]
            elif count >= w[i]:
                count -= w[i]
            else:
                cand, cs, ce, count = i, s, e, w[i] - count
        if cand < 0:
            break
        held = 0
        for i in range(n):
            s = fr[4 * i + 2]
            if s >= 0 and s <= fr[4 * i + 1] and same_key(kind, data, s, element_end(kind, data, s, fr[4 * i + 1]),
                                                          cs, ce):
                held += w[i]
        if 2 * held <= total:
            break
        for i in range(n):
            s = fr[4 * i + 2]
            if s < 0:
                continue
            if s <= fr[4 * i + 1]:
                e = element_end(kind, data, s, fr[4 * i + 1])
                if same_key(kind, data, s, e, cs, ce):
                    fr[4 * i + 2] = fr[4 * i + 3] = e + 1
                    continue
            fr[4 * i + 2] = -1      # off the frame from here
    for i in range(n):
        s, e = fr[4 * i + 3], fr[4 * i + 1]
        if w[i] == 0 or s > e:
            continue
        r = chrome_path(kind, data, s, e)
        if r < 0:     # not ASCII: Python's case rules, through the cache
            if kind == 4:
                path = PyUnicode_FromKindAndData(4, <const uint32_t *> data + s, e - s)
            else:
                path = PyUnicode_DecodeUTF8(<const char *> data + s, e - s, "strict")
            hit = cache.get(path)
            if hit is None:
                if len(cache) > (1 << 17):
                    cache.clear()
                hit = cache[path] = bool(is_chrome(path))
            r = hit
        if r:
            chrome += w[i]
    return chrome
