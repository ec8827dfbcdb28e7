# What the corpus modules share: the lake's characters and the hashes (``signatures._mix``,
# ``signatures.text_hashes``). Included first by corpus_signatures.pyx, corpus_quality.pyx
# and corpus_step.pyx.
from libc.stdint cimport uint32_t, uint64_t

cdef enum:
    CP_BITS = 21        # code points are below 2**21
    PARA_CH = 10        # "\n": two of them separate paragraphs
    PATH_CH = 0x1C      # between a paragraph's CSS path and its text
    LINK_START = 2
    LINK_END = 3

cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL
cdef uint64_t HASH_SEED = 0x5EEDC0DE7E57AA5EULL
cdef uint64_t LEN_MUL = 0xD6E8FEB86659FD93ULL


cdef inline uint64_t mix(uint64_t x) noexcept nogil:
    """splitmix64's finaliser (``signatures._mix``)."""
    x ^= x >> 30
    x *= 0xBF58476D1CE4E5B9ULL
    x ^= x >> 27
    x *= 0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef inline uint64_t text_hash(const uint32_t *cp, Py_ssize_t n) noexcept nogil:
    """``signatures.text_hashes`` of one string: the sum of mix(position << 21 | code
    point), then mixed with the length."""
    cdef uint64_t s = 0
    cdef Py_ssize_t i
    for i in range(n):
        s += mix((<uint64_t> i << CP_BITS) | cp[i])
    return mix(s + <uint64_t> n * LEN_MUL + HASH_SEED)
