# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The corpus stage's per-document signatures in one pass over each document's characters.

Gives exactly what ``warclake.tasks.corpus.signals.signatures`` defines with numpy (the reference):
per paragraph the text hash, the SimHash of character n-grams and the length of its
normalised text; per document the clean text's hash and length and its one-permutation
MinHash. Its input is the document as the lake stores it and the same document after
NFKC and lower case (done by Python on the whole text, see ``normalise.normalised_document``);
paragraphs are cut from both by the lake's separators, markers dropped and whitespace
collapsed here, so no Python string is made per paragraph but its CSS path.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_KIND, PyUnicode_READ, PyUnicode_WRITE, Py_UNICODE_ISSPACE, PyUnicode_Substring

include "corpus_common.pxi"
include "corpus_chrome.pxi"
include "corpus_sign_core.pxi"


cdef Py_ssize_t next_para(object s, int kind, void *data, Py_ssize_t i, Py_ssize_t n) noexcept:
    """End of the paragraph starting at i: the next "\\n\\n" (or n)."""
    while i + 1 < n:
        if PyUnicode_READ(kind, data, i) == PARA_CH and PyUnicode_READ(kind, data, i + 1) == PARA_CH:
            return i
        i += 1
    return n


cdef Py_ssize_t find_path_sep(int kind, void *data, Py_ssize_t i, Py_ssize_t end) noexcept:
    while i < end:
        if PyUnicode_READ(kind, data, i) == PATH_CH:
            return i
        i += 1
    return -1


def sign_documents(list texts, list norms, list labels, object is_chrome,
                   int para_ngram, int doc_ngram, int bins, int min_chars,
                   int64_t[::1] p_hash, uint64_t[::1] p_sim, int32_t[::1] p_chars, list p_paths,
                   int64_t[::1] d_hash, int32_t[::1] d_chars, uint32_t[:, ::1] d_minhash,
                   int32_t[::1] d_paras, bint chrome_rules=False):
    """Fill the paragraph arrays (in document order) and the document arrays; ``p_paths``
    gets each paragraph's CSS path. ``norms[i]`` is ``texts[i]`` after NFKC and lower case.
    ``chrome_rules``: ``is_chrome`` is ``quality.is_chrome_path``, whose rules decide ASCII
    paths here without calling it.
    The clean text of a document is its paragraphs of ``signatures.compared_paragraphs``
    (``min_chars`` is its length floor) joined by "\\n"."""
    cdef Py_ssize_t di, nd = len(texts), pi = 0, k, g_max
    cdef Py_ssize_t o_i, o_n, o_end, n_i, n_n, n_end, sep, body, c, start, para_start
    cdef int o_kind, n_kind, j
    cdef void *o_data
    cdef void *n_data
    cdef uint32_t ch
    cdef bint space, pending_space
    cdef GrowBuf para
    cdef GrowBuf clean
    cdef uint64_t *pw = NULL
    cdef char *filled = NULL
    cdef GramTables tables
    cdef dict chrome_of = {}
    cdef list sel
    cdef list spans
    cdef object text, norm, labs, path, chrome, prev_path = None, prev_chrome = None
    g_max = max(para_ngram, doc_ngram)
    para.cp = NULL; para.len = 0; para.cap = 0
    clean.cp = NULL; clean.len = 0; clean.cap = 0
    if d_minhash.shape[1] != bins or d_minhash.shape[0] < nd:
        raise ValueError("minhash array of the wrong shape")
    gram_tables(&tables, g_max, bins)
    pw, filled = tables.pw, tables.filled
    try:
        for di in range(nd):
            text, norm, labs = texts[di], norms[di], labels[di]
            para.len = 0
            clean.len = 0
            spans = []          # (start, length) of each paragraph in para.cp
            sel = []            # paragraphs labelled good
            o_n = len(text) if text else 0
            n_n = len(norm) if norm else 0
            o_i = n_i = 0
            if o_n:
                o_kind, o_data = PyUnicode_KIND(text), PyUnicode_DATA(text)
                n_kind, n_data = PyUnicode_KIND(norm), PyUnicode_DATA(norm)
            j = 0
            while o_n and o_i <= o_n:
                if n_i > n_n:
                    raise ValueError("normalised text has fewer paragraphs than the text")
                o_end = next_para(text, o_kind, o_data, o_i, o_n)
                n_end = next_para(norm, n_kind, n_data, n_i, n_n)
                sep = find_path_sep(o_kind, o_data, o_i, o_end)
                body = find_path_sep(n_kind, n_data, n_i, n_end)
                if (sep < 0) != (body < 0):
                    raise ValueError("normalised text differs from the text in its path separators")
                path = PyUnicode_Substring(text, o_i, sep) if sep >= 0 else ""
                body = body + 1 if body >= 0 else n_i
                # the body: markers dropped, whitespace runs as one space, none at the ends
                buf_reserve(&para, n_end - body)
                para_start = para.len
                pending_space = False
                for c in range(body, n_end):
                    ch = PyUnicode_READ(n_kind, n_data, c)
                    if ch == LINK_START or ch == LINK_END:
                        continue
                    if Py_UNICODE_ISSPACE(ch):
                        pending_space = para.len > para_start
                        continue
                    if pending_space:
                        para.cp[para.len] = 32
                        para.len += 1
                        pending_space = False
                    para.cp[para.len] = ch
                    para.len += 1
                if pi >= p_hash.shape[0]:
                    raise ValueError("more paragraphs than the arrays hold")
                k = para.len - para_start
                p_hash[pi] = <int64_t> text_hash(para.cp + para_start, k)
                p_sim[pi] = simhash(para.cp + para_start, k, para_ngram, pw)
                p_chars[pi] = <int32_t> k
                p_paths.append(path)
                spans.append((para_start, k))
                if labs is not None and j < len(labs) and labs[j] == "good":
                    sel.append(j)
                pi += 1
                j += 1
                if o_end == o_n:
                    if n_end != n_n:
                        raise ValueError("normalised text has more paragraphs than the text")
                    break
                o_i, n_i = o_end + 2, n_end + 2
            d_paras[di] = j
            # the compared paragraphs: good (or all), not chrome, long enough; each step
            # only when it leaves some
            sel = sel or list(range(j))
            keep = []
            for x in sel:
                path = p_paths[pi - j + x]
                if path is prev_path or path == prev_path:    # as the paragraph before
                    chrome = prev_chrome
                elif chrome_rules:
                    chrome = chrome_path(PyUnicode_KIND(path), PyUnicode_DATA(path), 0, len(path))
                else:
                    chrome = -1
                if chrome < 0:     # not ASCII (Python's case rules), or another function
                    chrome = chrome_of.get(path)
                    if chrome is None:
                        chrome = chrome_of[path] = bool(is_chrome(path))
                prev_path, prev_chrome = path, chrome
                if not chrome:
                    keep.append(x)
            keep = keep or sel
            sel = [x for x in keep if spans[x][1] >= min_chars]
            keep = sel or keep
            for c, x in enumerate(keep):
                start, k = spans[x]
                buf_reserve(&clean, k + 1)
                if c:
                    clean.cp[clean.len] = PARA_CH
                    clean.len += 1
                memcpy(clean.cp + clean.len, para.cp + start, k * sizeof(uint32_t))
                clean.len += k
            d_hash[di] = <int64_t> text_hash(clean.cp, clean.len)
            d_chars[di] = <int32_t> clean.len
            one_permutation(clean.cp, clean.len, doc_ngram, pw, bins, &d_minhash[di, 0], filled)
        return pi
    finally:
        free(para.cp)
        free(clean.cp)
        gram_tables_free(&tables)
