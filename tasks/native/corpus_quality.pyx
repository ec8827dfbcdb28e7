# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The counts behind the corpus stage's quality metrics, in one compiled pass per document.

``warclake.tasks.corpus.signals.quality.document_metrics_reference`` defines every metric in Python
and numpy; each metric is a quotient of whole numbers (characters, units, lines, n-gram
occurrences), and this module counts those numbers, so ``quality`` divides them exactly as
the reference does and both paths give the same doubles. Strings are read as code points:
the document's link markers dropped, paragraphs cut at blank lines, CSS paths parted from
the text, lines cut and stripped, units (words, or CJK characters and runs) found and hashed
as ``signatures.text_hashes`` hashes a string. Lower case is the reference's ``str.lower``:
one look-up per character when the text holds no character whose lower case is longer or
depends on its neighbours (capital sigma), otherwise ``str.lower`` itself.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport realloc
from libc.string cimport memcmp, memset
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_KIND, PyUnicode_READ, PyUnicode_FromKindAndData, Py_UNICODE_ISSPACE

include "corpus_common.pxi"
include "corpus_chrome.pxi"
include "corpus_counts.pxi"


def document_counts(str text, object labels, object lang_units, bint english, object is_chrome, dict chrome_cache):
    """The whole numbers every metric of one lake document is made of (a dict; see
    ``quality._metrics_from_counts``). ``lang_units``: the language is one measured in
    units; ``english``: count Gopher's stop words."""
    cdef Py_ssize_t n = len(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef list lab_list = None if labels is None else list(labels)
    cdef Work local
    cdef Work *work
    if not CONFIGURED:
        raise RuntimeError("corpus_quality is not configured")
    work = work_take(&local)
    try:
        return _counts(work, text, n, kind, data, lab_list, lang_units, english, is_chrome, chrome_cache)
    finally:
        work_give(work)


cdef dict _counts(Work *work, str text, Py_ssize_t n, int kind, void *data, list lab_list, object lang_units,
                  bint english, object is_chrome, dict chrome_cache):
    cdef Py_ssize_t i, j, k, a, b, r, prev_path = 0, prev_path_len = -1, prev_chrome = 0, nchunks = 0
    cdef uint32_t ch
    cdef bint in_link = False
    cdef int64_t link_chars = 0, chrome_chars = 0, depth = 0, total = 0, bad_chars = 0
    cdef Buf clean, plain
    cdef Py_ssize_t *pstart = NULL
    cdef Py_ssize_t *plen = NULL
    cdef Py_ssize_t *fr = NULL
    cdef object path, chrome
    cdef bint labels_fit
    cdef int64_t row[N_COUNTS]
    clean.len = plain.len = 0
    # the text without link markers; the link text's characters but spaces and line feeds
    clean.cp = <uint32_t *> scratch(work, 0, (n + 1) * sizeof(uint32_t))
    for i in range(n):
        ch = PyUnicode_READ(kind, data, i)
        if link_scan(ch, &in_link, &link_chars):
            continue
        clean.cp[clean.len] = ch
        clean.len += 1
    # paragraphs at "\n\n" (the path up to the first separator, else the whole chunk);
    # the plain text is their bodies joined by "\n"
    k = 1
    i = 0
    while i + 1 < clean.len:
        if clean.cp[i] == NL and clean.cp[i + 1] == NL:
            k += 1
            i += 2
        else:
            i += 1
    pstart = <Py_ssize_t *> scratch(work, 3, k * sizeof(Py_ssize_t))
    plen = <Py_ssize_t *> scratch(work, 4, k * sizeof(Py_ssize_t))
    fr = <Py_ssize_t *> scratch(work, 13, 4 * k * sizeof(Py_ssize_t))    # the paths, for the frame
    plain.cp = <uint32_t *> scratch(work, 1, (clean.len + 1) * sizeof(uint32_t))
    a = 0
    while clean.len:
        b = a
        while b < clean.len and not (clean.cp[b] == NL and b + 1 < clean.len and clean.cp[b + 1] == NL):
            b += 1
        j = a
        while j < b and clean.cp[j] != PATH_CH:
            j += 1
        for i in range(a, j):
            if clean.cp[i] == 0x3E:
                depth += 1
        depth += j > a
        if nchunks:
            plain.cp[plain.len] = NL
            plain.len += 1
        pstart[nchunks] = plain.len
        for i in range(j + 1, b):
            plain.cp[plain.len] = clean.cp[i]
            plain.len += 1
        plen[nchunks] = plain.len - pstart[nchunks]
        total += plen[nchunks]
        fr[4 * nchunks], fr[4 * nchunks + 1] = a, j
        if prev_path_len == j - a and memcmp(clean.cp + prev_path, clean.cp + a, (j - a) * sizeof(uint32_t)) == 0:
            r = prev_chrome       # the same path as the paragraph before
        else:
            r = chrome_path(4, clean.cp, a, j)
        if r < 0:     # not ASCII: Python's case rules, through the cache
            path = PyUnicode_FromKindAndData(4, clean.cp + a, j - a)
            chrome = chrome_cache.get(path)
            if chrome is None:
                chrome = chrome_cache[path] = bool(is_chrome(path))
            r = chrome
        prev_path, prev_path_len, prev_chrome = a, j - a, r
        if r:
            chrome_chars += plen[nchunks]
        nchunks += 1
        if b >= clean.len:
            break
        a = b + 2
    if chrome_chars:     # chrome only past the page's frame
        chrome_chars = chrome_past_frame(4, clean.cp, fr, plen, nchunks, total, is_chrome, chrome_cache)
    labels_fit = lab_list is not None and len(lab_list) == nchunks
    if labels_fit:
        for i in range(nchunks):
            if lab_list[i] == "bad":
                bad_chars += plen[i]
    plain_counts(work, plain.cp, plain.len, pstart, plen, nchunks, lang_units, english,
                 link_chars, chrome_chars, depth, total, labels_fit, bad_chars, row)
    return counts_dict(row)


