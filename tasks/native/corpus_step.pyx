# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The corpus stage's per-archive step in one compiled pass per document, read straight from
the UTF-8 of an Arrow string column (no Python string per document or paragraph).

Per paragraph: its CSS path (copied into one buffer, the paragraphs' ``path`` column), the
text hash, SimHash and length of its normalised text; per document: the clean text's hash,
length and one-permutation MinHash (what ``corpus_signatures`` computes) and the counts of
the quality metrics (what ``corpus_quality.document_counts`` counts). The values are those
of the references (``signatures.sign_documents_reference``, ``quality.
document_metrics_reference``):

* a paragraph's body is normalised by one look-up per character (``configure_nfkc``'s
  table) when every character of it is in the table, else by the Python function given
  (NFKC and lower case of the body, as ``normalise.normalise`` does);
* page chrome of a CSS path by ``quality.is_chrome_path``'s rules for ASCII paths (the
  elements a path shares with the path before it are not looked at again), else by the
  Python function given;
* the metrics' counts are taken from the paragraphs' bodies when the document's
  paragraphs are those of its text without link markers (no marker in a path or between
  two line feeds, no link open across paragraphs, every non-empty paragraph with a path);
  otherwise the document's ``counted`` is 0 and the caller counts it from its text
  (``corpus_quality.document_counts``).

Paths are most of a lake text's characters (page templates nest deeply): they are found
with ``memchr`` and copied, and only their last elements are looked at.
"""
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy
from cpython.unicode cimport Py_UNICODE_ISSPACE

cdef extern from "Python.h":
    object PyUnicode_DecodeUTF8(const char *s, Py_ssize_t size, const char *errors)

include "corpus_common.pxi"
include "corpus_chrome.pxi"
include "corpus_sign_core.pxi"
include "corpus_counts.pxi"

cdef enum:
    F_CHROME = 1        # path flags: an element is page chrome,
    F_WIDE = 2          # a byte is not ASCII (Python's rules then decide chrome),
    F_MARKER = 4        # a link marker is in the path


cdef inline Py_ssize_t para_end(const uint8_t *d, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """Start of the first "\\n\\n" at or after i, or n (``str.split``'s scan)."""
    cdef const uint8_t *p
    while i + 1 < n:
        p = <const uint8_t *> memchr(d + i, PARA_CH, n - 1 - i)
        if p == NULL:
            return n
        i = p - d
        if d[i + 1] == PARA_CH:
            return i
        i += 1
    return n


cdef inline Py_ssize_t utf8_at(const uint8_t *d, Py_ssize_t i, Py_ssize_t end, uint32_t *out) noexcept nogil:
    """Decode the character at i (strict UTF-8); returns where the next one starts, or -1."""
    cdef uint32_t c = d[i], b, cp
    cdef int need, k
    if c < 0x80:
        out[0] = c
        return i + 1
    if c < 0xC2:
        return -1
    if c < 0xE0:
        need, cp = 1, c & 0x1F
    elif c < 0xF0:
        need, cp = 2, c & 0x0F
    elif c < 0xF5:
        need, cp = 3, c & 0x07
    else:
        return -1
    if i + need >= end:
        return -1
    for k in range(1, need + 1):
        b = d[i + k]
        if (b & 0xC0) != 0x80:
            return -1
        cp = (cp << 6) | (b & 0x3F)
    if (need == 2 and (cp < 0x800 or 0xD800 <= cp <= 0xDFFF)) or (need == 3 and (cp < 0x10000 or cp > 0x10FFFF)):
        return -1
    out[0] = cp
    return i + need + 1


cdef struct PathMemo:
    # the path before (its bytes stay in the column's buffer) and, per '>' of it, the flags
    # of everything before that '>'
    const uint8_t *p
    Py_ssize_t n
    Py_ssize_t ngt
    Py_ssize_t cap
    Py_ssize_t *gt
    uint8_t *flags_at
    int flags


cdef int path_flags(PathMemo *m, const uint8_t *p, Py_ssize_t n, Py_ssize_t *depth) except -1:
    """F_* flags of the CSS path p[:n] and its number of '>'. The elements before the last
    '>' it shares with the path before are taken from ``m``."""
    cdef Py_ssize_t lim, common = 0, k, i, el, ngt
    cdef uint64_t x, y
    cdef int fl
    cdef uint32_t c
    if m.p != NULL and n == m.n and memcmp(p, m.p, n) == 0:
        depth[0] = m.ngt
        return m.flags
    if m.cap < n + 1:
        m.gt = <Py_ssize_t *> realloc(m.gt, (n + 64) * sizeof(Py_ssize_t))
        m.flags_at = <uint8_t *> realloc(m.flags_at, n + 64)
        if m.gt == NULL or m.flags_at == NULL:
            raise MemoryError()
        m.cap = n + 64
    k = -1
    if m.p != NULL:
        lim = n if n < m.n else m.n
        while common + 8 <= lim:
            memcpy(&x, p + common, 8)
            memcpy(&y, m.p + common, 8)
            if x != y:
                break
            common += 8
        while common < lim and p[common] == m.p[common]:
            common += 1
        k = m.ngt - 1
        while k >= 0 and m.gt[k] >= common:
            k -= 1
    if k >= 0:
        el, fl, ngt = m.gt[k] + 1, m.flags_at[k], k + 1
    else:
        el, fl, ngt = 0, 0, 0
    for i in range(el, n + 1):
        if i < n:
            c = p[i]
            if c != 0x3E:
                if c >= 0x80:
                    fl |= F_WIDE
                elif c == LINK_START or c == LINK_END:
                    fl |= F_MARKER
                continue
        if not (fl & F_CHROME) and chrome_element(1, p, el, i):
            fl |= F_CHROME
        if i < n:
            m.gt[ngt] = i
            m.flags_at[ngt] = <uint8_t> fl
            ngt += 1
        el = i + 1
    m.p, m.n, m.ngt, m.flags = p, n, ngt, fl
    depth[0] = ngt
    return fl


def count_names() -> tuple:
    """The counts' names in the order ``sign_and_count`` writes a document's row ("top"
    three times: n = 2..4; "dup" six times: n = 5..10)."""
    return COUNTS


def count_paragraphs(const int64_t[::1] offsets, const uint8_t[::1] data, const uint8_t[::1] valid):
    """Paragraphs of the documents (a non-empty text has one more than its separators)."""
    cdef Py_ssize_t di, a, e, n, total = 0
    cdef const uint8_t *d
    for di in range(valid.shape[0]):
        n = offsets[di + 1] - offsets[di]
        if not valid[di] or n <= 0:
            continue
        d = &data[0] + offsets[di]
        a = 0
        while True:
            total += 1
            e = para_end(d, a, n)
            if e >= n:
                break
            a = e + 2
    return total


cdef struct Spans:
    Py_ssize_t *start
    Py_ssize_t *length
    uint8_t *flag       # 1: labelled good, 2: page chrome
    Py_ssize_t cap


cdef int spans_reserve(Spans *s, Py_ssize_t n) except -1:
    if s.cap >= n:
        return 0
    n = max(n, 2 * s.cap, 256)
    s.start = <Py_ssize_t *> realloc(s.start, n * sizeof(Py_ssize_t))
    s.length = <Py_ssize_t *> realloc(s.length, n * sizeof(Py_ssize_t))
    s.flag = <uint8_t *> realloc(s.flag, n)
    if s.start == NULL or s.length == NULL or s.flag == NULL:
        raise MemoryError()
    s.cap = n
    return 0


# The body is written at out[k] through locals of sign_and_count's loop (``out``, ``k``),
# not through its GrowBuf: the buffer's address goes to buf_reserve, so the compiler would
# write and read back its length for every character.
cdef inline Py_ssize_t put_normal(uint32_t *out, Py_ssize_t k, Py_ssize_t para_start, uint32_t ch,
                                  bint *pending) noexcept:
    """Append one character of a normalised body at k; returns where the next goes. Markers
    dropped, whitespace runs as one space, none at the start (the caller's last pending
    space is dropped at the end)."""
    if ch == LINK_START or ch == LINK_END:
        return k
    if Py_UNICODE_ISSPACE(ch):
        pending[0] = k > para_start
        return k
    if pending[0]:
        out[k] = 32
        k += 1
        pending[0] = False
    out[k] = ch
    return k + 1


cdef inline Py_ssize_t put_ascii(uint32_t *out, Py_ssize_t k, uint32_t ch, bint *pending) noexcept:
    """Append an ASCII character that is not whitespace to a normalised body (its NFKC is
    itself; lower case by a shift), after the pending space if there is one."""
    if pending[0]:
        out[k] = 32
        k += 1
        pending[0] = False
    out[k] = ch + 32 if 65 <= ch <= 90 else ch
    return k + 1


def sign_and_count(const int64_t[::1] offsets, const uint8_t[::1] data, const uint8_t[::1] valid,
                   const int64_t[::1] lab_off, const uint8_t[::1] lab_valid, const int8_t[::1] lab_code,
                   const uint8_t[::1] lang_flags, object is_chrome, dict chrome_cache, object nfkc_lower,
                   int para_ngram, int doc_ngram, int bins, int min_chars, bint kept_only,
                   int64_t[::1] p_hash, uint64_t[::1] p_sim, int32_t[::1] p_chars,
                   int64_t[::1] path_off, uint8_t[::1] path_data, Py_ssize_t pi, Py_ssize_t path_pos,
                   int64_t[::1] d_hash, int32_t[::1] d_chars, uint32_t[:, ::1] d_minhash,
                   int32_t[::1] d_paras, int64_t[:, ::1] count_rows, uint8_t[::1] counted):
    """Every signature and the metrics' counts of the documents ``offsets``/``data``/``valid``
    (an Arrow string column's offsets rebased to ``data``, its bytes, 1 where not null).
    Per document: ``lab_off``/``lab_valid`` its labels in ``lab_code`` (1 good, 2 bad, 0
    other), ``lang_flags`` (1: measured in units, 2: English). ``kept_only``: the metrics'
    counts are those of the paragraphs the corpus keeps (``quality.kept_text``: labelled
    good, all without labels), else of all. Paragraph outputs are filled
    from index ``pi`` and the path bytes from ``path_pos`` (``path_off[pi]`` must be it);
    document outputs from 0; ``count_rows`` gets each document's counts (``count_names``'
    order) and ``counted`` 1, or 0 where it is left to be counted from its text. Returns
    (paragraphs, path bytes) filled up to."""
    cdef Py_ssize_t nd = valid.shape[0], di, n, a, e, sep, bs, be, i, j, k, x, nlab, pcap, para_start
    cdef Py_ssize_t plain_len, g_max, c, depth, out_n, kk, plain_before
    cdef bint keep, kept_empty
    cdef int64_t link_before, depth_before
    cdef uint32_t *out_cp
    cdef const uint8_t *d
    cdef const uint8_t *sp
    cdef uint32_t ch, at
    cdef uint32_t *plain_cp
    cdef Py_ssize_t *pstart
    cdef Py_ssize_t *plen
    cdef Py_ssize_t *fr
    cdef GrowBuf para, clean
    cdef Spans spans
    cdef PathMemo memo
    cdef uint64_t *pw = NULL
    cdef char *filled = NULL
    cdef GramTables tables
    cdef bint in_link, table_ok, pending, metrics_ok, labels_fit, any_good, any_kept, any_long
    cdef int nl_state, fl
    cdef int64_t link_chars, chrome_chars, depth_sum, total, bad_chars
    cdef object body, low, path, chrome
    cdef int low_kind
    cdef void *low_data
    cdef Work local
    cdef Work *work = NULL
    if not CONFIGURED or not NFKC_READY:
        raise RuntimeError("corpus_step is not configured")
    if (d_minhash.shape[1] != bins or d_minhash.shape[0] < nd or offsets.shape[0] < nd + 1
            or count_rows.shape[0] < nd or count_rows.shape[1] != N_COUNTS or counted.shape[0] < nd):
        raise ValueError("document arrays of the wrong shape")
    spans.start = NULL; spans.length = NULL; spans.flag = NULL; spans.cap = 0
    memo.p = NULL; memo.n = 0; memo.ngt = 0; memo.cap = 0; memo.gt = NULL; memo.flags_at = NULL; memo.flags = 0
    g_max = max(para_ngram, doc_ngram, 1)
    gram_tables(&tables, g_max, bins)
    pw, filled = tables.pw, tables.filled
    work = work_take(&local)
    # the bodies' and the clean text's buffers stay in the working memory between calls
    para.cp, para.len, para.cap = <uint32_t *> work.p[14], 0, <Py_ssize_t> (work.cap[14] // sizeof(uint32_t))
    clean.cp, clean.len, clean.cap = <uint32_t *> work.p[15], 0, <Py_ssize_t> (work.cap[15] // sizeof(uint32_t))
    try:
        for di in range(nd):
            n = offsets[di + 1] - offsets[di] if valid[di] else 0
            d = &data[0] + offsets[di]
            nlab = lab_off[di + 1] - lab_off[di] if lab_valid[di] else 0
            para.len = 0
            j = 0
            link_chars = chrome_chars = depth_sum = total = bad_chars = 0
            in_link = False
            metrics_ok = n < (<Py_ssize_t> 1 << 31)
            # per-paragraph arrays grown as paragraphs come (a bound from the text's
            # length would touch fresh memory for nothing)
            pcap = spans.cap
            plain_cp = <uint32_t *> scratch(work, 1, (n + 1) * sizeof(uint32_t))
            pstart = <Py_ssize_t *> scratch(work, 3, pcap * sizeof(Py_ssize_t))
            plen = <Py_ssize_t *> scratch(work, 4, pcap * sizeof(Py_ssize_t))
            fr = <Py_ssize_t *> scratch(work, 13, 4 * pcap * sizeof(Py_ssize_t))
            plain_len = 0
            kk = 0
            kept_empty = False
            a = 0
            while n:
                e = para_end(d, a, n)
                sp = <const uint8_t *> memchr(d + a, PATH_CH, e - a)
                if pi >= p_hash.shape[0] or path_pos + (e - a) > path_data.shape[0]:
                    raise ValueError("more paragraphs than the arrays hold")
                if j >= pcap:
                    spans_reserve(&spans, j + 1)
                    pcap = spans.cap
                    pstart = <Py_ssize_t *> scratch(work, 3, pcap * sizeof(Py_ssize_t))
                    plen = <Py_ssize_t *> scratch(work, 4, pcap * sizeof(Py_ssize_t))
                    fr = <Py_ssize_t *> scratch(work, 13, 4 * pcap * sizeof(Py_ssize_t))
                keep = not kept_only or not lab_valid[di] or (j < nlab and lab_code[lab_off[di] + j] == 1)
                link_before, depth_before, plain_before = link_chars, depth_sum, plain_len
                if keep and kk == 0 and e == a:
                    kept_empty = True
                if sp != NULL:
                    sep = sp - d
                    bs = sep + 1
                    fl = path_flags(&memo, d + a, sep - a, &depth)
                    memcpy(&path_data[0] + path_pos, d + a, sep - a)
                    path_pos += sep - a
                    depth_sum += depth + (sep > a)
                    if fl & F_MARKER:
                        metrics_ok = False
                    if fl & F_WIDE:
                        path = PyUnicode_DecodeUTF8(<const char *> d + a, sep - a, "strict")
                        chrome = chrome_cache.get(path)
                        if chrome is None:
                            if len(chrome_cache) > (1 << 17):
                                chrome_cache.clear()
                            chrome = chrome_cache[path] = bool(is_chrome(path))
                        fl = F_CHROME if chrome else 0
                    nl_state = 0
                else:
                    bs = sep = a
                    fl = 0
                    if e > a:
                        metrics_ok = False     # the metrics take such a paragraph as a path
                    nl_state = 1 if a else 0
                path_off[pi + 1] = path_pos
                be = e
                # the body: its plain characters (metrics) and its normalised form (signatures)
                if kk:
                    plain_cp[plain_len] = PARA_CH
                    plain_len += 1
                pstart[kk] = plain_len
                buf_reserve(&para, 8 * (be - bs) + 8)
                para_start = out_n = para.len
                out_cp = para.cp
                pending = False
                table_ok = True
                i = bs
                while i < be:
                    ch = d[i]
                    if 0x20 < ch < 0x80:
                        # printable ASCII but the space (most characters): no marker, line
                        # feed or whitespace; its NFKC is itself, lower-cased by a shift
                        link_chars += in_link
                        nl_state = 0
                        plain_cp[plain_len] = ch
                        plain_len += 1
                        if table_ok:
                            out_n = put_ascii(out_cp, out_n, ch, &pending)
                        i += 1
                        continue
                    i = utf8_at(d, i, be, &ch)
                    if i < 0:
                        raise ValueError("a text is not valid UTF-8")
                    if link_scan(ch, &in_link, &link_chars):
                        if nl_state:
                            nl_state = 2
                        continue
                    if ch == PARA_CH:
                        if nl_state == 2:
                            metrics_ok = False    # removing the markers would join two lines into a separator
                        nl_state = 1
                    else:
                        nl_state = 0
                    plain_cp[plain_len] = ch
                    plain_len += 1
                    if table_ok:
                        if ch < 0x80:     # ASCII: its NFKC is itself; lower case; whitespace (str.isspace)
                            if ch == 32 or 9 <= ch <= 13 or 28 <= ch <= 31:
                                pending = out_n > para_start
                            else:
                                out_n = put_ascii(out_cp, out_n, ch, &pending)
                        elif ch < 0x10000 and NFKC_AT[ch] != 0xFFFFFFFFU:
                            at = NFKC_AT[ch]
                            for k in range(NFKC_LEN[ch]):
                                out_n = put_normal(out_cp, out_n, para_start, NFKC_POOL[at + k], &pending)
                        else:
                            table_ok = False
                if e < n and (in_link or nl_state == 2):
                    metrics_ok = False            # a link or a marker run across the separator
                para.len = out_n
                plen[kk] = plain_len - pstart[kk]
                if not table_ok:      # NFKC in context: Python's, on the body with its markers
                    body = PyUnicode_DecodeUTF8(<const char *> d + bs, be - bs, "strict")
                    low = nfkc_lower(body)
                    para.len = para_start
                    buf_reserve(&para, len(low) + 1)
                    out_cp, out_n = para.cp, para_start
                    low_kind, low_data = PyUnicode_KIND(low), PyUnicode_DATA(low)
                    pending = False
                    for k in range(len(low)):
                        out_n = put_normal(out_cp, out_n, para_start, PyUnicode_READ(low_kind, low_data, k), &pending)
                    para.len = out_n
                k = para.len - para_start
                p_hash[pi] = <int64_t> text_hash(para.cp + para_start, k)
                p_sim[pi] = simhash(para.cp + para_start, k, para_ngram, pw)
                p_chars[pi] = <int32_t> k
                spans.start[j], spans.length[j] = para_start, k
                spans.flag[j] = (1 if j < nlab and lab_code[lab_off[di] + j] == 1 else 0) | (2 if fl & F_CHROME else 0)
                if keep:
                    total += plen[kk]
                    fr[4 * kk], fr[4 * kk + 1] = a, sep   # its path, for the frame
                    if fl & F_CHROME:
                        chrome_chars += plen[kk]
                    kk += 1
                else:     # the metrics leave it out: its characters, links and path
                    plain_len, link_chars, depth_sum = plain_before, link_before, depth_before
                pi += 1
                j += 1
                if e >= n:
                    break
                a = e + 2
            d_paras[di] = <int32_t> j
            # the compared paragraphs (signatures.compared_paragraphs): good (or all), not
            # chrome, long enough; each step only when it leaves some
            any_good = any_kept = any_long = False
            for x in range(j):
                any_good |= spans.flag[x] & 1
            for x in range(j):
                if not (any_good and not spans.flag[x] & 1) and not spans.flag[x] & 2:
                    any_kept = True
            for x in range(j):
                if any_good and not spans.flag[x] & 1:
                    continue
                if any_kept and spans.flag[x] & 2:
                    continue
                any_long |= spans.length[x] >= min_chars
            clean.len = 0
            c = 0
            for x in range(j):
                if any_good and not spans.flag[x] & 1:
                    continue
                if any_kept and spans.flag[x] & 2:
                    continue
                if any_long and spans.length[x] < min_chars:
                    continue
                buf_reserve(&clean, spans.length[x] + 1)
                if c:
                    clean.cp[clean.len] = PARA_CH
                    clean.len += 1
                memcpy(clean.cp + clean.len, para.cp + spans.start[x], spans.length[x] * sizeof(uint32_t))
                clean.len += spans.length[x]
                c += 1
            d_hash[di] = <int64_t> text_hash(clean.cp, clean.len)
            d_chars[di] = <int32_t> clean.len
            one_permutation(clean.cp, clean.len, doc_ngram, pw, bins, &d_minhash[di, 0], filled)
            if not metrics_ok:
                counted[di] = 0
                continue
            labels_fit = not kept_only and lab_valid[di] and nlab == j
            if labels_fit:
                for x in range(j):
                    if lab_code[lab_off[di] + x] == 2:
                        bad_chars += plen[x]
            if kk == 1 and kept_empty:
                kk = 0       # the kept text is empty: no paragraph (``str.split`` of "")
            if chrome_chars:     # chrome only past the page's frame
                chrome_chars = chrome_past_frame(1, d, fr, plen, kk, total, is_chrome, chrome_cache)
            plain_counts(work, plain_cp, plain_len, pstart, plen, kk, lang_flags[di] & 1, lang_flags[di] & 2,
                         link_chars, chrome_chars, depth_sum, total, labels_fit, bad_chars, &count_rows[di, 0])
            counted[di] = 1
        return pi, path_pos
    finally:
        work.p[14], work.cap[14] = para.cp, para.cap * sizeof(uint32_t)
        work.p[15], work.cap[15] = clean.cp, clean.cap * sizeof(uint32_t)
        work_give(work)
        free(spans.start)
        free(spans.length)
        free(spans.flag)
        free(memo.gt)
        free(memo.flags_at)
        gram_tables_free(&tables)
