# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The gradient and hessian histograms of ``tools.train_sieve.fit_forest``
in C: the same sums as its numpy reference (one ``np.bincount`` per feature), each bin's
rows added in row order, so the trained model is the same bytes on either path."""
from libc.stdint cimport int64_t, uint8_t

import numpy as np


def histograms(const uint8_t[:, ::1] bins, const int64_t[::1] rows, const double[::1] g,
               const double[::1] h, Py_ssize_t n_bins):
    """(gradient, hessian) sums per (feature, bin) over ``rows``: ``bins`` holds a row's bin
    number of every feature (rows × features, read row by row); row k adds ``g[rows[k]]``
    and ``h[rows[k]]`` to each of its bins after row k-1 did."""
    cdef Py_ssize_t n = bins.shape[0], n_feat = bins.shape[1], m = rows.shape[0], j, k
    cdef int64_t r
    cdef double gv, hv
    if g.shape[0] != n or h.shape[0] != n:
        raise ValueError("gradients and bins of other lengths")
    if n_bins > 256 or n_bins < 1:
        raise ValueError("bin numbers are one byte")
    for k in range(m):
        if rows[k] < 0 or rows[k] >= n:
            raise ValueError("a row outside the bins")
    # (feature, bin, gradient / hessian): a bin's two sums share a cache line
    both_a = np.zeros((n_feat, 256, 2))
    cdef double[:, :, ::1] both = both_a
    cdef const uint8_t *row
    cdef double *p = &both[0, 0, 0]
    cdef double *cell
    with nogil:
        for k in range(m):
            r = rows[k]
            row = &bins[r, 0]
            gv = g[r]
            hv = h[r]
            for j in range(n_feat):
                cell = p + (j * 256 + row[j]) * 2
                cell[0] += gv
                cell[1] += hv
    if both_a[:, n_bins:].any():
        raise ValueError("a bin number outside the histogram")
    return (np.ascontiguousarray(both_a[:, :n_bins, 0]),
            np.ascontiguousarray(both_a[:, :n_bins, 1]))
