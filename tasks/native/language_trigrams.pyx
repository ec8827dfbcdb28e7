# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The trigram penalties of the first-pass language identifier, in one compiled pass.

``warclake.tasks.extract.language_first_pass.reference_scores`` defines the counts in Python: the
words of a text (maximal runs of the letters ``configure`` marks), each lowered character
by character; every trigram inside a word that the table knows adds its row of
per-language penalties. The counts are whole numbers (the trigrams known and each
language's sum), so both paths give the same. The table's keys (three code points of 21
bits each) go into an open-addressing hash table here; the reference searches them sorted.
"""
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_KIND, PyUnicode_READ

cdef enum:
    TABLE_CPS = 0x0530     # characters the letter and lower-case tables cover

cdef uint8_t LETTER[TABLE_CPS]
cdef uint32_t LOWER[TABLE_CPS]
cdef int64_t *SLOT_KEY = NULL      # -1: empty slot
cdef int64_t *SLOT_ROW = NULL
cdef uint64_t MASK = 0
cdef const uint8_t[:, ::1] PENALTY
cdef Py_ssize_t N_LANGS = 0
cdef bint CONFIGURED = False


cdef inline uint64_t slot_of(int64_t key) nogil:
    cdef uint64_t h = <uint64_t>key * <uint64_t>0x9E3779B97F4A7C15ULL
    return (h >> 20) & MASK


def configure(list letters, list lower, const int64_t[::1] keys, const uint8_t[:, ::1] penalty):
    """``letters``/``lower``: per code point below 0x530, a word letter (0/1) and its lower
    case; ``keys``: trigram keys; ``penalty``: their rows of per-language penalties."""
    global SLOT_KEY, SLOT_ROW, MASK, PENALTY, N_LANGS, CONFIGURED
    cdef Py_ssize_t i, size = 1
    cdef uint64_t slot
    if len(letters) != TABLE_CPS or len(lower) != TABLE_CPS:
        raise ValueError(f"letter and lower tables need {TABLE_CPS} entries")
    if penalty.shape[0] != keys.shape[0]:
        raise ValueError("one row of penalties per key")
    for i in range(TABLE_CPS):
        LETTER[i] = <uint8_t>letters[i]
        LOWER[i] = <uint32_t>lower[i]
    while size < 2 * keys.shape[0] + 2:
        size *= 2
    CONFIGURED = False
    free(SLOT_KEY)
    free(SLOT_ROW)
    SLOT_KEY = <int64_t *>calloc(size, sizeof(int64_t))
    SLOT_ROW = <int64_t *>calloc(size, sizeof(int64_t))
    if SLOT_KEY == NULL or SLOT_ROW == NULL:
        raise MemoryError()
    MASK = size - 1
    for i in range(size):
        SLOT_KEY[i] = -1
    for i in range(keys.shape[0]):
        if keys[i] < 0:
            raise ValueError("negative trigram key")
        slot = slot_of(keys[i])
        while SLOT_KEY[slot] != -1 and SLOT_KEY[slot] != keys[i]:
            slot = (slot + 1) & MASK
        SLOT_KEY[slot] = keys[i]
        SLOT_ROW[slot] = i
    PENALTY = penalty
    N_LANGS = penalty.shape[1]
    CONFIGURED = True


cdef inline Py_ssize_t row_of(int64_t key) nogil:
    cdef uint64_t slot = slot_of(key)
    while SLOT_KEY[slot] != -1:
        if SLOT_KEY[slot] == key:
            return SLOT_ROW[slot]
        slot = (slot + 1) & MASK
    return -1


def scores(str text):
    """(trigrams known, per language the sum of their penalties) of ``text``."""
    cdef Py_ssize_t i, j, row, n = len(text), length = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef uint32_t ch, a = 0, b = 0
    cdef long known = 0
    cdef int64_t key
    cdef int64_t *sums
    cdef list out
    if not CONFIGURED:
        raise RuntimeError("language_trigrams is not configured")
    sums = <int64_t *>calloc(N_LANGS + 1, sizeof(int64_t))
    if sums == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            ch = PyUnicode_READ(kind, data, i)
            if ch >= TABLE_CPS or not LETTER[ch]:
                length = 0
                continue
            ch = LOWER[ch]
            length += 1
            if length >= 3:
                key = (<int64_t>a << 42) | (<int64_t>b << 21) | <int64_t>ch
                row = row_of(key)
                if row >= 0:
                    known += 1
                    for j in range(N_LANGS):
                        sums[j] += PENALTY[row, j]
            a = b
            b = ch
        out = [sums[j] for j in range(N_LANGS)]
    finally:
        free(sums)
    return known, out
