r"""The implicitly centred sparse matrix, shared by every kernel that centres sparse data (#34).

Centring a sparse matrix :math:`S` makes it dense; the kernels only need products with
:math:`Z = S - \mathbf 1 m^\top`, which stay sparse plus a rank-one correction:

.. math::

    Z V = S V - \mathbf 1 (m^\top V), \qquad Z^\top R = S^\top R - m\,(\mathbf 1^\top R),

and the dense Grams :math:`Z\,\mathrm{diag}(w)\,Z^\top` (``n x n``) and :math:`Z^\top Z`
(``d x d``) come from the sparse ones the same way. :class:`CenteredSparse` holds ``S`` in the
format it was given (CSR or CSC: its products run on that one) and builds the other one lazily,
once, for row access (rows, cluster sums, k-means) or column access (column blocks, column
slices). Memory: :math:`O(\mathrm{nnz} + n + d)` (twice the stored values once both formats
are built).

The same matrix written as :math:`Z = \mathbf 1 b^\top + E` (the form of
:class:`sparsefs._kernels.kmeans.ImplicitRows`) has :math:`E = S` and :math:`b = -m`:
:attr:`CenteredSparse.background` and :meth:`CenteredSparse.csr_parts`.

:func:`center_sparse` is the one preparation of sparse data (a canonical copy, exact constant
columns, optional z-scoring, centring kept implicit) behind ``l21.prepare_design`` and
``ufcm.prepare_data``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["CenteredSparse", "center_sparse", "sparse_col_extrema"]


class CenteredSparse:
    r"""The matrix :math:`Z = S - \mathbf 1 m^\top` of a sparse ``S``, never formed.

    Supports ``Z @ V``, ``Z.T @ R``, ``Z[:, cols]`` (a column subset, still implicit),
    ``Z * b`` (column scaling), ``shape``, the Grams :meth:`row_gram` and :meth:`col_gram`,
    column sums and centred sums of squares, centred row norms, dense rows
    (:meth:`rows`), per-label row sums (:meth:`group_sums`) and :meth:`toarray` (for column
    subsets smaller than the number of rows, and tests).

    Parameters
    ----------
    S : scipy.sparse matrix of shape (n_samples, n_features)
        Kept as a float64 array in its own format when CSR or CSC (CSR otherwise), duplicates
        summed; its products run on that format.
    m : ndarray of shape (n_features,)
        What is subtracted from every row (the column means, or zeros).
    """

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, S, m: np.ndarray):
        S = sp.csc_array(S, dtype=np.float64) if S.format == "csc" else sp.csr_array(
            S, dtype=np.float64)
        S.sum_duplicates()
        self._set(S, m)

    def _set(self, S, m) -> CenteredSparse:
        self.S = S
        self.m = np.asarray(m, dtype=np.float64)
        self.shape = S.shape
        self._other = None  # the other format, built on first use
        return self

    @classmethod
    def _derived(cls, S, m) -> CenteredSparse:
        """From a slice or scaling of a held ``S`` (no duplicates: no canonical pass)."""
        return cls.__new__(cls)._set(S, m)

    # -- the two access formats ---------------------------------------------------------------

    def _format(self, fmt: str):
        """``S`` in CSR or CSC: itself, or the other format, converted once."""
        if self.S.format == fmt:
            return self.S
        if self._other is None:
            self._other = self.S.asformat(fmt)
        return self._other

    @property
    def csr(self) -> sp.csr_array:
        """``S`` in CSR (row access), built once."""
        return self._format("csr")

    @property
    def csc(self) -> sp.csc_array:
        """``S`` in CSC (column access), built once."""
        return self._format("csc")

    @property
    def background(self) -> np.ndarray:
        r""":math:`b = -m`, with :math:`Z = \mathbf 1 b^\top + E` and :math:`E = S`."""
        return -self.m

    def csr_parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(data, indices, indptr)`` of ``S`` in CSR with sorted indices, contiguous float64 /
        int64: the E of :class:`sparsefs._kernels.kmeans.ImplicitRows` (with
        :attr:`background`)."""
        E = self.csr
        if not E.has_sorted_indices:
            E = E.sorted_indices()
        return (np.ascontiguousarray(E.data, dtype=np.float64),
                np.ascontiguousarray(E.indices, dtype=np.int64),
                np.ascontiguousarray(E.indptr, dtype=np.int64))

    # -- products -----------------------------------------------------------------------------

    def __matmul__(self, V) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        out = np.asarray(self.S @ V, dtype=np.float64)
        out -= self.m @ V  # a scalar (V a vector) or one row (V a matrix), broadcast
        return out

    def rmatmul(self, R) -> np.ndarray:
        r""":math:`Z^\top R`."""
        R = np.asarray(R, dtype=np.float64)
        out = np.asarray(self.S.T @ R, dtype=np.float64)
        out -= np.multiply.outer(self.m, R.sum(axis=0))
        return out

    @property
    def T(self) -> _Transposed:
        """The transpose (products only)."""
        return _Transposed(self)

    def __getitem__(self, key) -> CenteredSparse:
        """Only ``Z[:, cols]`` (a column subset, still implicit)."""
        if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], slice)
                and key[0] == slice(None)):
            raise IndexError("CenteredSparse supports column selection Z[:, cols] only.")
        cols = key[1]
        return CenteredSparse._derived(self.S[:, cols], self.m[cols])

    def __mul__(self, b) -> CenteredSparse:
        r""":math:`Z\,\mathrm{diag}(b)` (each column scaled)."""
        b = np.asarray(b, dtype=np.float64)
        return CenteredSparse._derived(self._scaled(b), self.m * b)

    def _scaled(self, b: np.ndarray):
        r""":math:`S\,\mathrm{diag}(b)` in the format of ``S``."""
        if self.S.format == "csc":
            return self.S @ sp.diags_array(b)
        return sp.csr_array(self.S * b[None, :])

    # -- Grams and norms ----------------------------------------------------------------------

    def row_gram(self, b: np.ndarray | None = None) -> np.ndarray:
        r""":math:`Z\,\mathrm{diag}(b)\,Z^\top` (dense ``n x n``; ``b`` = 1 by default)."""
        b = np.ones(self.shape[1]) if b is None else np.asarray(b, dtype=np.float64)
        Sb = self._scaled(b)
        G = np.asarray((Sb @ self.S.T).toarray())
        u = Sb @ self.m  # S diag(b) m
        G -= u[:, None] + u[None, :]
        G += float(self.m @ (b * self.m))
        return G

    def col_sums(self) -> np.ndarray:
        r""":math:`Z^\top \mathbf 1` (the column sums, zero for centred columns)."""
        return np.asarray(self.S.sum(axis=0)).ravel() - self.shape[0] * self.m

    def col_gram(self) -> np.ndarray:
        r""":math:`Z^\top Z` (dense ``d x d``)."""
        n = self.shape[0]
        G = np.asarray((self.S.T @ self.S).toarray())
        colsum = np.asarray(self.S.sum(axis=0)).ravel()
        G -= np.multiply.outer(colsum, self.m) + np.multiply.outer(self.m, colsum)
        G += n * np.multiply.outer(self.m, self.m)
        return G

    def col_sq_sums(self) -> np.ndarray:
        r""":math:`\sum_i (s_{ij} - m_j)^2` per column, over the stored values and the zeros."""
        X, mean = self.csr, self.m
        n, d = X.shape
        cols = X.indices
        nnz = np.bincount(cols, minlength=d)
        stored = np.bincount(cols, weights=(X.data - mean[cols]) ** 2, minlength=d)
        return stored + (n - nnz) * mean * mean

    def row_sq_norms(self) -> np.ndarray:
        r""":math:`\|s_i - m\|^2`, from the stored values of each row and :math:`\|m\|^2`."""
        X, m = self.csr, self.m
        rows = np.repeat(np.arange(self.shape[0]), np.diff(X.indptr))
        mj = m[X.indices]
        terms = (X.data - mj) ** 2 - mj * mj
        return np.bincount(rows, weights=terms, minlength=self.shape[0]) + float(np.dot(m, m))

    # -- rows ---------------------------------------------------------------------------------

    def rows(self, idx) -> np.ndarray:
        """Dense copies of the rows ``idx`` (an int or an int array), centred."""
        idx = np.asarray(idx)
        block = self.csr[np.atleast_1d(idx)].toarray() - self.m
        return block[0] if idx.ndim == 0 else block

    def group_sums(self, labels: np.ndarray, n_groups: int) -> np.ndarray:
        """Sums of the centred rows by label (``n_groups x d``, dense)."""
        labels = np.asarray(labels)
        n = self.shape[0]
        ind = sp.csr_array((np.ones(n), (labels, np.arange(n))), shape=(n_groups, n))
        sums = (ind @ self.csr).toarray()
        sums -= np.bincount(labels, minlength=n_groups)[:, None] * self.m
        return sums

    def toarray(self) -> np.ndarray:
        """The dense matrix (only for small column subsets, and tests)."""
        return self.S.toarray() - self.m


class _Transposed:
    """``Z.T`` of a :class:`CenteredSparse`: only ``Z.T @ R``."""

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, base: CenteredSparse):
        self.base = base
        self.shape = base.shape[::-1]

    def __matmul__(self, R) -> np.ndarray:
        return self.base.rmatmul(R)


def sparse_col_extrema(X) -> tuple[np.ndarray, np.ndarray]:
    """Column maxima and minima of the sparse ``X`` (the implicit zeros included; zeros for
    an empty ``X``)."""
    if X.shape[0] == 0:
        return np.zeros(X.shape[1]), np.zeros(X.shape[1])
    out = []
    for r in (X.max(axis=0), X.min(axis=0)):
        r = r.toarray() if sp.issparse(r) else np.asarray(r)
        out.append(np.asarray(r, dtype=np.float64).ravel())
    return out[0], out[1]


def center_sparse(X, *, standardize: bool, center: bool = True, scale: float | None = None,
                  exponent: int | None = None, fmt: str = "csr"):
    r"""Centre (implicitly) and scale the columns of a sparse X without overflow; a copy.

    * ``standardize``: each column is divided by its largest magnitude (so values of 1e300 or
      1e-300 are safe), then centred and divided by its standard deviation (from the moments
      :math:`E[x^2] - E[x]^2`, clipped at 0: cancellation on near-constant columns);
    * otherwise the whole matrix is divided by one common factor ``scale`` (default: the
      largest magnitude of its columns, 1 if one is all zero; a power of two keeps the
      division exact) and, with ``center``, centred.

    Exactly constant columns become zero columns when centred (``S`` stores nothing there,
    ``m`` is 0); without centring they are kept.

    Parameters
    ----------
    X : scipy.sparse matrix of shape (n_samples, n_features)
        Not modified.
    standardize, center : bool
        ``standardize`` implies centring.
    scale : float, optional
        The common factor without ``standardize``.
    exponent : int, optional
        Instead of ``scale``: divide by :math:`2^e` (exact, also for ``e = 1024``, where the
        factor itself overflows; the returned ``scale`` is then ``inf``).
    fmt : {"csr", "csc"}
        The format of the operator's ``S`` (the one its products run on).

    Returns
    -------
    Z : CenteredSparse
        :math:`(X - \mathbf 1\,\mathrm{offset}^\top) / \mathrm{scale}` (per column), implicit.
    offset : ndarray of shape (n_features,)
        The column means of X when centred (zeros otherwise), constant columns included.
    scale : ndarray of shape (n_features,)
        What divided each column of X.
    constant : ndarray of bool, shape (n_features,)
    """
    S = (sp.csc_array if fmt == "csc" else sp.csr_array)(X, dtype=np.float64, copy=True)
    S.sum_duplicates()
    n, d = S.shape
    cols = S.indices if fmt == "csr" else np.repeat(np.arange(d), np.diff(S.indptr))
    hi, lo = sparse_col_extrema(S)
    amax = np.maximum(np.abs(hi), np.abs(lo))
    amax = np.where(amax > 0, amax, 1.0)
    constant = hi == lo if n else np.ones(d, dtype=bool)
    if standardize:
        S.data /= amax[cols]
        mean = np.asarray(S.sum(axis=0)).ravel() / n
        sq = np.bincount(cols, weights=S.data * S.data, minlength=d) / n
        std = np.sqrt(np.maximum(sq - mean * mean, 0.0))
        std = np.where(constant | (std == 0), 1.0, std)
        S.data /= std[cols]
        S.data[constant[cols]] = 0.0
        S.eliminate_zeros()
        m = np.where(constant, 0.0, mean / std)
        return CenteredSparse(S, m), mean * amax, std * amax, constant
    if exponent is not None:
        S.data = np.ldexp(S.data, -exponent)
        common = float(np.ldexp(1.0, exponent)) if exponent < 1024 else float("inf")
    else:
        common = float(amax.max(initial=1.0)) if scale is None else float(scale)
        S.data /= common
    offset = np.zeros(d)
    if center:
        offset = np.asarray(S.sum(axis=0)).ravel() / n
        S.data[constant[cols]] = 0.0
        S.eliminate_zeros()
    m = np.where(constant, 0.0, offset)
    with np.errstate(over="ignore"):  # an exponent of 1024: offsets beyond the float range
        offset = offset * common if exponent is None else np.ldexp(offset, exponent)
    return CenteredSparse(S, m), offset, np.full(d, common), constant
