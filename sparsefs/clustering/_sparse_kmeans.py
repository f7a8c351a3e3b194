r"""Sparse k-means: l0-k-means (Chang et al. 2018) and l1 sparse k-means (Witten & Tibshirani 2010).

Both alternate a weighted k-means C-step with an exact w-step from
:mod:`sparsefs._kernels.sparse_kmeans`, and choose their sparsity by the gap statistic over
column-permuted data (:mod:`sparsefs.clustering._tuning`). The C-step runs the Hartigan–Wong
kernel (:mod:`sparsefs._kernels.kmeans`) on the column-scaled matrix with the zero-weight columns
dropped, from the current partition (warm) and from ``n_init`` fresh k-means++ starts, and keeps
the candidate with the larger sparse objective :math:`\max_w \sum_j w_j a_j(C)`. Along a tuning
grid every value also continues from the previous value's solution.
"""

import dataclasses
import math
import warnings
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from sparsefs._kernels import kmeans as _km
from sparsefs._kernels import l1_kmeans as _l1
from sparsefs._kernels import sparse_kmeans as _k
from sparsefs._kernels.sparse_kmeans_alternation import Fit as _Fit
from sparsefs._kernels.sparse_kmeans_alternation import InMemory as _InMemory
from sparsefs._kernels.sparse_kmeans_alternation import Restarts as _Restarts
from sparsefs._kernels.sparse_kmeans_alternation import Solver as _Solver
from sparsefs._kernels.sparse_kmeans_alternation import best_alternation as _best_alternation
from sparsefs._kernels.sparse_kmeans_alternation import chain_path as _chain_path
from sparsefs._kernels.sparse_kmeans_alternation import data_scale as _data_scale
from sparsefs._kernels.sparse_kmeans_alternation import restart_search as _restart_search
from sparsefs._kernels.sparse_kmeans_alternation import starts as _starts
from sparsefs.base import BaseSelectingClusterer
from sparsefs.clustering._tuning import gap_tuning
from sparsefs.exceptions import RestartWarning
from sparsefs.utils._sklearn_compat import Interval, StrOptions

__all__ = ["L0KMeans", "SparseKMeans"]

_INT32_MAX = np.iinfo(np.int32).max
# Below this many entries of X a fit is hundreds of tiny k-means and BLAS calls, dominated by
# per-call overhead: one thread is faster, and far faster on a loaded machine (measured:
# 1.5 s against 23 s for the gap path on 120 x 2000 with other processes running).
_SINGLE_THREAD_SIZE = 1 << 20
# Sparse X with at most this many entries (n * p; 512 KB as a dense float64 array) is fitted
# through the dense code: the fit is then bitwise the dense fit, exact ties included (tiny
# matrices with duplicate rows tie BCSS and distances exactly, and the sparse kernels'
# rounding, 1e-16 relative, would break such ties differently). Above it the sparse kernels
# run and X is never densified.
_SPARSE_EXACT_SIZE = 1 << 16


def _column_transform(X: np.ndarray, standardize: bool) -> tuple[np.ndarray, np.ndarray, Any]:
    """``(X - offset) / scale``, with the offset and scale it used.

    ``standardize``: column means and standard deviations (ddof 0); a constant column becomes
    exactly 0. Otherwise offset 0 and a scalar power of two that is 1 unless max |X| is out of
    the safe range. Either way no sum of squares of the result can overflow, and the fit on
    ``X * 2**k`` equals the fit on X.
    """
    if not standardize:
        c = _data_scale(X)
        return (X / c if c != 1.0 else X), np.zeros(X.shape[1]), c
    colmax, colmin = X.max(axis=0), X.min(axis=0)
    c = _data_scale(colmax=colmax, colmin=colmin)
    if X.flags.c_contiguous:  # three compiled passes, one copy
        out, mean, sd = _k.standardize_columns(X, c, colmax, colmin)
        return out, mean * c, sd * c
    Xs = X / c if c != 1.0 else X
    mean = Xs.mean(axis=0)
    constant = colmax == colmin
    mean[constant] = Xs[0, constant]
    out = Xs - mean  # a new array, scaled in place below
    sd = np.sqrt(np.einsum("ij,ij->j", out, out) / X.shape[0])  # one pass, no temporary
    sd[constant] = 1.0
    out[:, constant] = 0.0
    out /= sd
    return out, mean * c, sd * c


def _sparse_transform(X, standardize: bool):
    """:func:`_column_transform` of sparse X: an implicit matrix (``ImplicitRows``: stored
    entries scaled, the centring a dense background row), never densified."""
    c = _data_scale(colmax=X.data, colmin=X.data) if X.nnz else 1.0
    Z, mean, sd = _k.standardize_sparse(X, standardize, c)
    if not standardize:
        return Z, np.zeros(X.shape[1]), c
    return Z, mean * c, sd * c


def _kmeans(X, n_clusters, *, init="k-means++", n_init=1, seed=None, algorithm="hartigan"):
    """Labels of the best of ``n_init`` k-means starts (Hartigan–Wong kernel; none empty).

    ``init``: "k-means++", or an array of initial centres (then one start from it).
    """
    if isinstance(init, str):
        res = _km.kmeans(X, n_clusters, n_init=n_init, seed=seed, init=init,
                         algorithm=algorithm)
    else:
        res = _km.kmeans(X, n_clusters, n_init=1, init=np.asarray(init, dtype=np.float64),
                         algorithm=algorithm)
    return res.labels


#: The restart search at its full default size up to this many entries of X (n * p; the
#: microarray and image sets: 72 x 7129 is 0.5 M), shrinking in proportion beyond ...
_SEARCH_FULL_SIZE = 1 << 20
#: ... and off from this many (the plain alternation of ``n_starts`` first partitions: on
#: large data each alternation costs seconds, and the optima of many samples are stabler).
_SEARCH_MAX_SIZE = 1 << 23


def _search_scale(n: int, p: int) -> float:
    """The share of the default restart-search counts run on X of shape (n, p)."""
    size = n * p
    if size > _SEARCH_MAX_SIZE:
        return 0.0
    return min(1.0, _SEARCH_FULL_SIZE / max(size, 1))


def _keep_k_l1_weights(a, k):
    """The l1 w-step at the bound that keeps k features: :math:`\\Delta = a_{(k+1)}`."""
    if k >= a.shape[0]:
        return _l1.l1_weights(a, math.inf)
    delta = -np.partition(-a, k)[k]  # the (k+1)-th largest BCSS
    t = _l1.soft_threshold(a, delta)
    norm = math.sqrt(float(t @ t))
    if norm > 0:
        return t / norm
    # the top k+1 scores are tied: equal weights on the top k (lower indices first)
    return _k.l0_weights(a, k) / math.sqrt(k)


class _BaseSparseKMeans(BaseSelectingClusterer):
    """Shared fitting machinery of the two sparse k-means estimators."""

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelectingClusterer._parameter_constraints,
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_permutations": [Interval(Integral, 1, None, closed="left")],
        "gap_rule": [StrOptions({"max", "1se"})],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "n_starts": [Interval(Integral, 1, None, closed="left")],
        "n_feature_starts": [Interval(Integral, 0, None, closed="left"), None],
        "n_random_starts": [Interval(Integral, 0, None, closed="left"), None],
        "union_size": [Interval(Integral, 0, None, closed="left"), None],
        "n_perturb": [Interval(Integral, 0, None, closed="left"), None],
        "n_exchange": [Interval(Integral, 0, None, closed="left"), None],
        "step_n_init": [Interval(Integral, 0, None, closed="left")],
        "algorithm": [StrOptions({"hartigan", "lloyd"})],
        "gap_n_init": [Interval(Integral, 1, None, closed="left"), None],
        "gap_path": [StrOptions({"chains", "restarts"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "standardize": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    _accept_sparse = ("csr", "csc")
    _outputs = frozenset({"weights_"})

    # --- hooks -------------------------------------------------------------------------
    def _w_step(self, value):  # pragma: no cover - abstract
        """The w-step for one sparsity value (a function of the BCSS vector)."""
        raise NotImplementedError

    # --- shared ------------------------------------------------------------------------
    def _prepare(self, X):
        n = X.shape[0]
        if n < self.n_clusters:
            raise ValueError(
                f"n_samples={n} should be >= n_clusters={self.n_clusters}."
            )
        if sp.issparse(X) and n * X.shape[1] > _SPARSE_EXACT_SIZE:
            # an implicit (centred, scaled) matrix: never densified
            X, self._x_offset, self._x_scale = _sparse_transform(X, self.standardize)
            return X
        if sp.issparse(X):  # at most 512 KB dense: the exact dense fit (_SPARSE_EXACT_SIZE)
            X = X.toarray()
        X, self._x_offset, self._x_scale = _column_transform(
            np.asarray(X, dtype=np.float64), self.standardize
        )
        return X

    def _seeds(self):
        """Sub-seeds, all drawn from one generator in a fixed layout."""
        rng = check_random_state(self.random_state)
        final, data = (int(v) for v in rng.randint(_INT32_MAX, size=2))
        perms = [tuple(int(v) for v in pair)
                 for pair in rng.randint(_INT32_MAX, size=(self.n_permutations, 2))]
        return final, data, perms

    def _solver(self, rng):
        return _Solver(self.n_clusters, self.step_n_init, self.algorithm, rng, self.n_starts)

    def _fit_path(self, X, seed, grid, n_init, slim=0):
        """Fit every value of ``grid`` (increasing) from one seed.

        ``n_init`` k-means++ Hartigan–Wong k-means on all features give the first partitions.
        ``gap_path="chains"``: the ``n_starts`` best of them (by the sparse objective at the
        first value) are each continued along the grid with the warm C-step
        (:func:`chain_path`). ``"restarts"`` (the former path): at each grid value the
        alternation runs from the ``n_starts`` best of them (by the sparse objective at that
        value), with ``step_n_init`` fresh starts in every C-step, and, after the first value,
        also from the previous value's solution (a continuation along the path). Either way
        the fit with the largest objective is kept, and the same function fits X and every
        permuted copy, so the gap compares like with like.

        ``slim`` (sparse input, where a p-vector per grid value adds up): 1 drops the
        cluster means of every fit (recomputed for the one kept: :meth:`_with_means`), 2
        (a reference copy, whose objectives alone are used) also the weights and BCSS.
        """
        ops = _InMemory(X)
        rng = np.random.default_rng(seed)
        solver = self._solver(rng)
        first = _km.kmeans(X, self.n_clusters, n_init=n_init, seed=rng, algorithm=self.algorithm,
                           return_all=True)
        starts = _starts(ops, [f.labels for f in first], self.n_clusters)
        if self.gap_path == "chains":
            path = _chain_path(ops, starts, [self._w_step(v) for v in grid],
                               max_iter=self.max_iter, tol=self.tol,
                               solver=dataclasses.replace(solver, step_n_init=0))
        else:
            path = None
        fits = []
        for v in grid:
            if path is not None:
                fit = next(path)
            else:
                extra = (fits[-1].labels,) if fits else ()
                fit = _best_alternation(ops, starts, self._w_step(v), max_iter=self.max_iter,
                                        tol=self.tol, solver=solver, extra=extra)
            if slim:
                fit = dataclasses.replace(fit, means=None)
                if slim == 2:
                    fit = dataclasses.replace(fit, weights=None, bcss=None)
            fits.append(fit)
        return fits

    def _with_means(self, X, fit):
        """``fit`` with its cluster means (recomputed from the labels when slimmed)."""
        if fit.means is not None:
            return fit
        _, means, _ = _InMemory(X).stats(fit.labels, self.n_clusters)
        return dataclasses.replace(fit, means=means)

    def _blas_flops(self, X) -> float:
        """0 (one BLAS thread) for X of at most ``_SINGLE_THREAD_SIZE`` entries (stored
        values when sparse), else the default."""
        size = X.nnz if sp.issparse(X) else X.shape[0] * X.shape[1]
        return 0.0 if size <= _SINGLE_THREAD_SIZE else super()._blas_flops(X)

    def _fit_sparse(self, X, value, grid):
        """Fit with a fixed sparsity ``value``, or tune it over ``grid`` (value None)."""
        value, fit = self._fit_sparse_impl(X, value, grid)
        return value, self._with_means(X, fit)

    def _restarts(self, shape):
        """The counts of the restart search for X of ``shape``: the parameters, or where
        they are None the defaults scaled by :func:`_search_scale`."""
        scale = _search_scale(*shape)
        values = []
        for given, default in ((self.n_feature_starts, 60), (self.n_random_starts, 40),
                               (self.union_size, 10), (self.n_perturb, 40),
                               (self.n_exchange, 15)):
            values.append(int(given) if given is not None
                          else (math.ceil(default * scale) if scale > 0 else 0))
        return _Restarts(self.n_starts, *values)

    def _subset_size(self, value):
        """Columns per feature-subset start of the search at ``value`` (None: the support
        size of the best first fit)."""
        return None

    def _search(self, X, seed, value, n_init, extra=()):
        """The restart search at one sparsity ``value`` (:func:`restart_search`): the first
        partitions exactly as :meth:`_fit_path` draws them, then the further starts."""
        ops = _InMemory(X)
        rng = np.random.default_rng(seed)
        solver = self._solver(rng)
        first = _km.kmeans(X, self.n_clusters, n_init=n_init, seed=rng, algorithm=self.algorithm,
                           return_all=True)
        return _restart_search(
            ops, _starts(ops, [f.labels for f in first], self.n_clusters), self._w_step(value),
            max_iter=self.max_iter, tol=self.tol, solver=solver,
            restarts=self._restarts(X.shape),
            subset_size=self._subset_size(value), extra=extra,
        )

    def _fit_sparse_impl(self, X, value, grid):
        final_seed, data_seed, perm_seeds = self._seeds()
        gap_n_init = self.n_init if self.gap_n_init is None else self.gap_n_init
        self.gap_ = None
        slim = 1 if sp.issparse(X) or isinstance(X, _km.ImplicitRows) else 0
        extra = ()
        if value is None:
            self.gap_, fits = gap_tuning(
                X,
                grid,
                lambda Xb, seed: self._fit_path(Xb, seed, grid, gap_n_init,
                                                slim=slim and (1 if Xb is X else 2)),
                data_seed=data_seed,
                permutation_seeds=perm_seeds,
                rule=self.gap_rule,
                progress=bool(self.verbose),
                desc=f"{type(self).__name__}: gap statistic",
            )
            value = self.gap_.best
            extra = (fits[self.gap_.best_index].labels,)  # the tuning fit continues as a start
        search = self._search(X, final_seed, value, self.n_init, extra=extra)
        self._search_result = search
        return value, search.fit

    def _store(self, fit: _Fit):
        search = getattr(self, "_search_result", None)
        self._search_result = None
        if search is None:  # one alternation (the dask path on data beyond memory)
            self.start_objectives_ = np.array([fit.objective])
            self.n_best_starts_ = 1
        else:
            self.start_objectives_ = search.start_objectives
            self.n_best_starts_ = search.n_best
            n = search.start_objectives.shape[0]
            if n >= 2 and search.n_best <= 1:
                ind = search.start_objectives[search.independent]
                warnings.warn(
                    f"{type(self).__name__}: the best objective ({fit.objective:.6g}) was "
                    f"reached by one of {n} starts only (the independent starts ended "
                    f"between {ind.min():.6g} and {ind.max():.6g}; start_objectives_): "
                    "another random_state may end at another optimum. More starts "
                    "(n_feature_starts, n_random_starts, n_perturb, n_exchange) make the fit more "
                    "reliable; for a stable feature list use StabilitySelector over seeds.",
                    RestartWarning,
                    stacklevel=5,
                )
        self.labels_ = fit.labels.astype(np.intp)
        self.weights_ = fit.weights
        self.bcss_ = fit.bcss
        self.objective_path_ = fit.objective_history
        self.objective_ = fit.objective_history
        self.n_iter_ = fit.n_iter
        self.converged_ = fit.converged
        self._centers_fit = fit.means  # in the transformed space, for predict
        self.cluster_centers_ = fit.means * self._x_scale + self._x_offset
        if not fit.converged:
            warnings.warn(
                f"{type(self).__name__} stopped at max_iter={self.max_iter} (relative weight "
                f"change above tol={self.tol}); increase max_iter.",
                ConvergenceWarning,
                stacklevel=4,
            )

    def _predict_in_memory(self, X) -> np.ndarray:
        """Nearest cluster centre in the weighted space.

        :math:`\\arg\\min_k \\sum_j w_j (x_j - \\mu_{kj})^2` over the features with nonzero
        weight (``weights_``), with :math:`\\mu_k` the ``cluster_centers_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse X (CSR/CSC) is not densified: the distances come from the sparse
            product of its weighted columns with the centres, centred implicitly (the
            selected columns of a small X, at most 2**16 entries, are densified).

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "cluster_centers_")
        X = self._validate(X, reset=False)
        cols = np.flatnonzero(self.weights_ > 0)
        if cols.size == 0:
            return np.zeros(X.shape[0], dtype=np.intp)
        sw = np.sqrt(self.weights_[cols])
        scale = self._x_scale[cols] if np.ndim(self._x_scale) else self._x_scale
        Xc = X[:, cols]
        if sp.issparse(Xc) and Xc.shape[0] * Xc.shape[1] <= _SPARSE_EXACT_SIZE:
            Xc = Xc.toarray()  # the selected columns of a small X: the exact dense distances
        if sp.issparse(Xc):  # ||x_w||^2 is the same for every centre: -2 x_w.c_w + ||c_w||^2
            Cw = self._centers_fit[:, cols] * sw
            G = Cw * (sw / scale)  # x_w.c_w = x.G - offset.G (implicit centring)
            cross = np.asarray(sp.csr_array(Xc, dtype=np.float64) @ G.T)
            cross -= self._x_offset[cols] @ G.T
            dist = (Cw * Cw).sum(axis=1) - 2.0 * cross
            return np.argmin(dist, axis=1).astype(np.intp)
        Xw = (np.asarray(Xc, dtype=np.float64) - self._x_offset[cols]) / scale * sw
        Cw = self._centers_fit[:, cols] * sw
        dist = (Xw * Xw).sum(axis=1)[:, None] - 2.0 * Xw @ Cw.T + (Cw * Cw).sum(axis=1)
        return np.argmin(dist, axis=1).astype(np.intp)

    def _predict_dask(self, X):
        """``predict`` on a dask array: a lazy dask array, per row block (docs/dask.md)."""
        from sparsefs._dask._kmeans import predict

        return predict(self, X)


_COMMON_PARAMS = """\
    n_permutations : int, default={n_perm}
        Number B of column-permuted reference copies of X for the gap statistic.
    gap_rule : {{"max", "1se"}}, default="max"
        ``"max"``: the grid value with the largest gap (the authors' rule); ``"1se"``: the
        smallest grid value whose gap is within one sd of the largest (one-standard-error rule).
    n_init : int, default=20
        k-means++ Hartigan–Wong k-means on all features: the candidate first partitions.
    n_starts : int, default=5
        Starts of the whole alternation: at each sparsity value the alternation runs from the
        ``n_starts`` distinct candidate first partitions with the largest sparse objective
        (and, along a tuning grid, from the previous value's solution); the largest final
        objective is kept. On column-permuted (null) data more starts reach higher objectives
        (relative to the best found: 0.961 with 1 start, 0.985 with 5, 0.992 with 20, on the
        Witten–Tibshirani design's gap path); the cost grows linearly.
    n_feature_starts : int or None, default=None
        The final fit (at the given or chosen sparsity) also starts the alternation from
        k-means on the columns most correlated with each of this many seed columns (as many
        columns as the sparsity keeps; SparseKMeans: as many as the best first fit keeps): a
        third the columns of largest absolute excess kurtosis, the rest drawn at random from
        the columns that no earlier start's subset holds (a cover of the features). A
        sparse cluster structure is carried by a block of co-varying features, which k-means
        on all features rarely isolates; a cluster of a few extreme samples shows in the
        kurtosis of its features.
    n_random_starts : int or None, default=None
        ... and from this many random balanced partitions.
    union_size : int or None, default=None
        ... and from k-means (10 starts) on the union of the supports of this many best fits
        (a polish over the candidate supports; 0: none).
    n_exchange : int or None, default=None
        ... then a module exchange from the best fit: the supports found so far grouped into
        modules of co-varying columns (average linkage, mean absolute correlation >= 0.5),
        and the alternation followed from the 10 best (by the sparse objective of a two-start
        k-means on the candidate columns) of the supports that swap one module of the best
        support for one of the ``n_exchange`` best-scoring modules outside it (or, with three
        or more modules, keep that one module and add the other), in rounds while the best
        improves (at most 5). With many clusters the optimum combines blocks that each
        separate a few of them, and an alternation moves its support a few columns at a time.
    n_perturb : int or None, default=None
        ... and from this many perturbations of the best fit so far (a random 15% of the
        samples moved to random clusters). ``None`` (each of the five): 60, 40, 10, 15 and 40
        for X of at most 2**20 entries (n * p; every microarray and image set of the
        benchmarks), about 170-230 alternations in all (``start_objectives_``, and the class
        Notes: the restart strategy); scaled down by 2**20 / (n p) above, and 0 (the plain
        alternation of ``n_starts`` first partitions) above 2**23 entries, where every
        alternation costs seconds.
    step_n_init : int, default=1
        Fresh k-means++ starts of every C-step besides the warm start from the current
        partition; the C-step keeps the candidate with the largest sparse objective
        :math:`\\max_w \\sum_j w_j a_j(C)`.
    algorithm : {{"hartigan", "lloyd"}}, default="hartigan"
        The k-means of every C-step: Hartigan–Wong (AS 136, after Lloyd passes; the
        partition is then Hartigan-optimal: no single point can move to another cluster and
        lower the weighted WCSS), or Lloyd's iteration alone.
    gap_n_init : int or None, default=None
        Restarts of the first partition during tuning, used alike on X and on every permuted
        copy (a different value on X than on the copies would bias the gap). ``None``: same as
        ``n_init``. The tuning path runs the ``n_starts`` alternations only (on X and on every
        copy alike); the final fit at the chosen value runs the whole restart search, with
        the tuning fit as one more start.
    gap_path : {{"chains", "restarts"}}, default="chains"
        How the tuning path fits the grid (on X and on every permuted copy alike, so the gap
        compares like with like). ``"chains"``: each of the ``n_starts`` best first
        partitions (ranked at the first grid value) is continued along the whole grid with
        the warm C-step (no fresh starts), and each value keeps the best chain: a quarter
        to a fifth of the former path's k-means runs on the embedded default (issue #33;
        docs/methods/sparse_kmeans.md, "Cost of the default tuning"). ``"restarts"``:
        the former path (issue #15): every value restarts the alternation from the
        ``n_starts`` best first partitions, with ``step_n_init`` fresh starts in every
        C-step, and continues the previous value's solution. The final fit runs the restart
        search either way.
    max_iter : int, default=100
        Maximum number of w-steps (the papers' designs converge in fewer than 10).
    tol : float, default=1e-4
        Stop when :math:`\\sum_j |w^{{t+1}}_j - w^t_j| / \\sum_j |w^t_j| \\le` ``tol``.
    standardize : bool, default=True
        Centre every column and scale it to unit variance before fitting, as the papers do in
        every experiment (spec 3.9): otherwise the BCSS of a feature grows with its variance
        and high-variance features win whatever their cluster structure. Constant columns stay
        at 0. ``False`` clusters X as given (scikit-learn ``KMeans`` convention).
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means restarts and the permutations (sub-seeds drawn from one generator).
"""

_COMMON_ATTRS = """\
    labels_ : ndarray of shape (n_samples,)
        Cluster of each sample (0..n_clusters-1, none empty).
    weights_ : ndarray of shape (n_features_in_,)
        The feature weights :math:`w` at the final partition.
    bcss_ : ndarray of shape (n_features_in_,)
        :math:`a_j(C)`, the between-cluster sum of squares at the final partition, of the
        standardised columns when ``standardize=True`` (then :math:`a_j = n R^2_j`, with
        :math:`R^2_j` the share of feature j's variance between the clusters).
    scores_ : ndarray of shape (n_features_in_,)
        Same as ``bcss_`` (higher = better).
    ranking_ : ndarray of shape (n_features_in_,)
        1 = largest BCSS; ties to the lower index.
    support_ : ndarray of shape (n_features_in_,), dtype bool
        The selected features (the top of ``ranking_``).
    n_features_to_select_ : int
        Number of selected features.
    cluster_centers_ : ndarray of shape (n_clusters, n_features_in_)
        Mean of every feature in each cluster (all features, in the units of X).
    objective_path_ : ndarray of shape (n_iter_,)
        :math:`\\sum_j w_j a_j(C)` after each w-step of the final fit (never decreasing).
    objective_ : ndarray of shape (n_iter_,)
        Same as ``objective_path_``.
    n_iter_ : int
        Number of w-steps of the final fit.
    converged_ : bool
        Whether the weights stopped changing before ``max_iter``.
    start_objectives_ : ndarray
        The final objective of every start of the final fit, in the order they ran (the
        first partitions, the tuning fit's continuation, the feature-subset starts, the
        random partitions, the union of supports, the module exchange, the perturbations):
        the spread of the local optima the alternation reaches.
    n_best_starts_ : int
        How many of them reached the objective of the fit returned (relative 1e-9). When
        only one did, a ``RestartWarning`` says so: another ``random_state`` may end at
        another optimum.
    gap_ : GapResult or None
        The gap curve when the sparsity was tuned (``grid``, ``gap``, ``sd``,
        ``log_objective``, ``ref_log_objectives``, ``n_nonzero``, ``best_index``; ``to_frame()``),
        else None.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X is a DataFrame with string column names.
"""

_COMMON_NOTES = """\
    **The restart strategy.** The objective has many local optima on weakly clustered data,
    and the alternation from k-means on all features reaches the best of them rarely (on
    GLIOMA, first 800 genes standardised, K = 4, s = 20: six seeds ended 4.3 % apart and the
    20 genes of two seeds shared as few as 5; ``n_init=100`` narrowed nothing). The final fit
    therefore runs the alternation from six kinds of starts (``n_starts`` first partitions,
    ``n_feature_starts`` feature-subset starts, ``n_random_starts`` random partitions, a
    k-means on the union of the best ``union_size`` supports, a module exchange over the
    supports found (``n_exchange``), ``n_perturb`` perturbations of the best) and keeps the
    largest objective; ``start_objectives_`` reports the spread and a
    ``RestartWarning`` says when the best was reached by at most one independent start
    (measured in docs/methods/sparse_kmeans.md, issue #33: within 0.5 % of the best objective
    known in 10 of 10 seeds on four ASU sets where the former default reached it in 1-2 of
    10). A gene list from one seed is one local optimum: for a list that holds across seeds,
    fit :class:`~sparsefs.selection.StabilitySelector` over seeds.

    With ``standardize=False``, data whose largest magnitude is above 1e100 or below 1e-100 is
    divided by a power of two before fitting (exact, so the partition and the weights are
    unchanged); ``bcss_``, ``scores_`` and ``objective_`` are then in those rescaled units.
    For X with at most 2**20 entries the fit runs on one BLAS/OpenMP thread (threadpoolctl):
    the gap path is hundreds of tiny k-means and BLAS calls, dominated by per-call overhead.

    Sparse X (CSR or CSC, float64 or float32) is never densified: the standardised matrix is
    held implicitly (the scaled stored entries plus a dense row of column offsets), the BCSS
    come from one pass over the nonzeros, the Hartigan–Wong and k-means++ kernels compute
    distances from the stored entries only (:math:`O(\\mathrm{nnz})` per pass), and the
    gap's permuted copies move the stored entries with exactly the dense path's random
    permutations, so the fit equals the fit on ``X.toarray()`` (up to rounding). It runs in
    float64, as the dense fit does. A sparse X of at most 2**16 entries (n * p, 512 KB
    dense) is fitted by the dense code on its dense copy, bitwise the dense fit: exact ties
    (duplicate rows, tied BCSS), common in tiny matrices, then break as they do there.
"""


class L0KMeans(_BaseSparseKMeans):
    __doc__ = r"""Sparse k-means with the l∞/l0 penalty (l0-k-means; Chang, Wang, Li & Xu 2018).

    Keeps the :math:`s` features that best separate the clusters and runs k-means on them:

    .. math::

        \max_{C, w} \sum_{j=1}^p w_j\, a_j(C) \quad \text{s.t.}\quad
        \|w\|_\infty \le 1,\ \|w\|_0 \le s,\ w \ge 0,

    with :math:`a_j(C) = \mathrm{TSS}_j - \mathrm{WCSS}_j(C)` the between-cluster sum of squares
    (BCSS) of feature :math:`j` under the partition :math:`C` (model 21). Algorithm 1 of the
    paper alternates (i) the w-step, exact by Theorem 2: :math:`w_j = 1` on the
    :math:`\lfloor s \rfloor` features with the largest :math:`a_j` (ties to the lower index),
    0 elsewhere; and (ii) Hartigan–Wong k-means on the selected features, the better (by the
    objective) of a warm start from the current partition and ``n_init`` fresh starts, so the
    objective never decreases. The first partition is k-means on all features with ``n_init``
    starts. Along the gap's grid each s also continues from the previous s's solution (the
    better of that and the fresh start is kept), on X and on every permuted copy alike. With
    :math:`s \ge p` it is plain k-means.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters K.
    n_features_to_select : int, float or None, default=None
        The sparsity level :math:`s`: an int count, a float fraction of the features in (0, 1]
        (rounded down, at least 1), or ``None`` to choose :math:`s` over
        ``n_features_grid`` by the gap statistic (:math:`\mathrm{Gap}(s) = \log O(s) -
        \operatorname{mean}_b \log O^*_b(s)`, :math:`O = \sum_j w_j a_j` at convergence, on X
        and on ``n_permutations`` copies with every column permuted independently).
    n_features_grid : array-like of int or None, default=None
        The values of :math:`s` tried when ``n_features_to_select=None``. ``None``: 20
        log-spaced integers in :math:`[\max(2, K), p/2]`, deduplicated (spec 3.5).
""" + _COMMON_PARAMS.format(n_perm=10) + r"""
    Attributes
    ----------
""" + _COMMON_ATTRS + r"""
    See Also
    --------
    SparseKMeans : the l1 (Witten & Tibshirani) sparse k-means.
    sklearn.cluster.KMeans : Lloyd's k-means (this estimator uses its own Hartigan–Wong kernel).

    Notes
    -----
""" + _COMMON_NOTES + r"""
    References
    ----------
    .. [1] X. Chang, Y. Wang, R. Li and Z. Xu, "Sparse K-means with l_inf/l_0 penalty for
       high-dimensional data clustering", Statistica Sinica 28(3):1265-1284, 2018;
       arXiv:1403.7890.
    .. [2] R. Tibshirani, G. Walther and T. Hastie, "Estimating the number of clusters in a
       data set via the gap statistic", JRSS B 63(2):411-423, 2001.

    Examples
    --------
    >>> from sparsefs.clustering import L0KMeans
    >>> from sparsefs.datasets import make_sparse_clusters_exp2
    >>> data = make_sparse_clusters_exp2(n_features=200, mu=1.2, random_state=0)
    >>> model = L0KMeans(n_clusters=3, n_features_to_select=50, random_state=0).fit(data.X)
    >>> int((model.support_ & data.support).sum())  # of the 50 relevant features
    50
    """

    _parameter_constraints: ClassVar[dict] = {
        **_BaseSparseKMeans._parameter_constraints,
        "n_features_grid": ["array-like", None],
    }

    def __init__(
        self,
        n_clusters=8,
        n_features_to_select=None,
        *,
        n_features_grid=None,
        n_permutations=10,
        gap_rule="max",
        n_init=20,
        n_starts=5,
        n_feature_starts=None,
        n_random_starts=None,
        union_size=None,
        n_perturb=None,
        n_exchange=None,
        step_n_init=1,
        algorithm="hartigan",
        gap_n_init=None,
        gap_path="chains",
        max_iter=100,
        tol=1e-4,
        standardize=True,
        random_state=None,
        verbose=False,
    ):
        self.n_clusters = n_clusters
        self.n_features_to_select = n_features_to_select
        self.n_features_grid = n_features_grid
        self.n_permutations = n_permutations
        self.gap_rule = gap_rule
        self.n_init = n_init
        self.n_starts = n_starts
        self.n_feature_starts = n_feature_starts
        self.n_random_starts = n_random_starts
        self.union_size = union_size
        self.n_perturb = n_perturb
        self.n_exchange = n_exchange
        self.step_n_init = step_n_init
        self.algorithm = algorithm
        self.gap_n_init = gap_n_init
        self.gap_path = gap_path
        self.max_iter = max_iter
        self.tol = tol
        self.standardize = standardize
        self.random_state = random_state
        self.verbose = verbose

    def _w_step(self, value):
        s = int(value)
        return lambda a: _k.l0_weights(a, s)

    def _subset_size(self, value):
        return int(value)

    def _grid(self, p):
        if self.n_features_grid is None:
            low = min(max(2, self.n_clusters), p)
            return _k.log_spaced_ints(low, max(low, p // 2), 20)
        grid = np.asarray(self.n_features_grid)
        if (
            grid.ndim != 1
            or grid.size == 0
            or not np.issubdtype(grid.dtype, np.integer)
            or grid.min() < 1
            or grid.max() > p
        ):
            raise ValueError(
                f"n_features_grid={self.n_features_grid!r} must be a non-empty 1-d sequence of "
                f"integers in [1, n_features={p}]."
            )
        return np.unique(grid.astype(np.int64))

    def _fit(self, X, y_idx):
        raw, X = X, self._prepare(X)
        grid = self._grid(X.shape[1]) if self.n_features_to_select_ is None else None
        _, fit = self._fit_sparse(X, self.n_features_to_select_, grid)
        self._store(fit)
        self._set_selection_tied(raw, fit.bcss, fit.weights > 0)

    def _fit_dask(self, X, y_idx):
        """``fit`` on a dask array, with Lloyd steps in dask (docs/dask.md)."""
        from sparsefs._dask import _kmeans as _dask_kmeans

        _dask_kmeans.fit(self, X)


class SparseKMeans(_BaseSparseKMeans):
    __doc__ = r"""Sparse k-means with the l1 penalty (Witten & Tibshirani 2010).

    .. math::

        \max_{C, w} \sum_{j=1}^p w_j\, a_j(C) \quad \text{s.t.}\quad
        \|w\|_2 \le 1,\ \|w\|_1 \le s,\ w \ge 0,

    with :math:`a_j(C)` the between-cluster sum of squares of feature :math:`j`. The
    alternation of the ``sparcl`` package, with a stronger C-step: the first partition is
    k-means on all features (``n_init`` starts), computed once; then, from
    :math:`w = \mathbf 1/\sqrt p`, the w-step :math:`w = S(a, \Delta)/\|S(a, \Delta)\|_2`
    (soft threshold :math:`S(a, \Delta)_j = \max(a_j - \Delta, 0)`, :math:`\Delta` the
    smallest level with :math:`\|w\|_1 \le s`) alternates with weighted Hartigan–Wong k-means
    (columns scaled by :math:`\sqrt{w_j}`, zero weights dropped; the better by the objective of
    a warm start and ``n_init`` fresh starts) until the weights stop changing. Along the tuning
    grid each bound also continues from the previous bound's solution, on X and on every
    permuted copy alike.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters K.
    wbound : float or None, default=None
        The l1 bound :math:`s \ge 1` (useful range :math:`(1, \sqrt p]`). ``None`` (with
        ``n_features_to_select=None``): chosen over ``wbound_grid`` by the permutation gap
        statistic, as ``sparcl`` does.
    n_features_to_select : int, float or None, default=None
        ``None``: the l1 rule: the selected features are those with nonzero weight. An int
        count (or a float fraction of the features, rounded down, at least 1) :math:`k`
        instead sets, at every w-step, the bound that keeps :math:`k` features:
        :math:`\Delta = a_{(k+1)}`, the (k+1)-th largest BCSS (the l1 solution for
        :math:`s = \|S(a, a_{(k+1)})\|_1/\|S(a, a_{(k+1)})\|_2`); the support is the top
        :math:`k` by BCSS. Give at most one of ``wbound`` and ``n_features_to_select``.
    wbound_grid : array-like of float or None, default=None
        The bounds tried when tuning. ``None``: ``sparcl``'s 10 values
        :math:`\exp(\mathrm{linspace}(\log 1.2, \log(0.9\sqrt p), 10))`.
    exact : bool, default=True
        Solve for :math:`\Delta` in closed form (sort-based, exact :math:`\|w\|_1 = s`);
        ``False`` uses ``sparcl``'s bisection (15 halvings, absolute tolerance 1e-4, so
        :math:`\|w\|_1 \le s` only approximately and scale dependent).
""" + _COMMON_PARAMS.format(n_perm=25) + r"""
    Attributes
    ----------
""" + _COMMON_ATTRS + r"""    wbound_ : float
        The l1 bound used: ``wbound``, the tuned value, or (with ``n_features_to_select``)
        :math:`\|w\|_1` of the final weights.

    See Also
    --------
    L0KMeans : the l0 sparse k-means of Chang et al.

    Notes
    -----
    ``scores_`` is the BCSS, not the weight: the weights are a monotone function of the BCSS
    on the support (:math:`w_j \propto a_j - \Delta`) and all 0 off it, so ranking by BCSS
    agrees with ranking by weight and also orders the unselected features. The support (the
    nonzero weights, :math:`a_j > \Delta`) is therefore the top of the ranking.

""" + _COMMON_NOTES + r"""
    References
    ----------
    .. [1] D. M. Witten and R. Tibshirani, "A framework for feature selection in clustering",
       JASA 105(490):713-726, 2010.
    .. [2] X. Chang, Y. Wang, R. Li and Z. Xu, Statistica Sinica 28(3):1265-1284, 2018
       (comparison with l0-k-means).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsefs.clustering import SparseKMeans
    >>> from sparsefs.datasets import make_sparse_clusters_exp2
    >>> data = make_sparse_clusters_exp2(n_features=200, mu=1.2, random_state=0)
    >>> model = SparseKMeans(n_clusters=3, wbound=4.0, random_state=0).fit(data.X)
    >>> w = model.weights_
    >>> round(float(np.linalg.norm(w)), 9), round(float(w.sum()), 9)  # ||w||_2, ||w||_1
    (1.0, 4.0)
    >>> int((model.support_ & data.support).sum()), int(model.support_.sum())
    (23, 23)
    """

    _parameter_constraints: ClassVar[dict] = {
        **_BaseSparseKMeans._parameter_constraints,
        "wbound": [Interval(Real, 1, None, closed="left"), None],
        "wbound_grid": ["array-like", None],
        "exact": ["boolean"],
    }

    def __init__(
        self,
        n_clusters=8,
        wbound=None,
        *,
        n_features_to_select=None,
        wbound_grid=None,
        n_permutations=25,
        gap_rule="max",
        exact=True,
        n_init=20,
        n_starts=5,
        n_feature_starts=None,
        n_random_starts=None,
        union_size=None,
        n_perturb=None,
        n_exchange=None,
        step_n_init=1,
        algorithm="hartigan",
        gap_n_init=None,
        gap_path="chains",
        max_iter=100,
        tol=1e-4,
        standardize=True,
        random_state=None,
        verbose=False,
    ):
        self.n_clusters = n_clusters
        self.wbound = wbound
        self.n_features_to_select = n_features_to_select
        self.wbound_grid = wbound_grid
        self.n_permutations = n_permutations
        self.gap_rule = gap_rule
        self.exact = exact
        self.n_init = n_init
        self.n_starts = n_starts
        self.n_feature_starts = n_feature_starts
        self.n_random_starts = n_random_starts
        self.union_size = union_size
        self.n_perturb = n_perturb
        self.n_exchange = n_exchange
        self.step_n_init = step_n_init
        self.algorithm = algorithm
        self.gap_n_init = gap_n_init
        self.gap_path = gap_path
        self.max_iter = max_iter
        self.tol = tol
        self.standardize = standardize
        self.random_state = random_state
        self.verbose = verbose

    def _subset_size(self, value):
        return self._keep

    def _w_step(self, value):
        if self._keep is not None:
            return lambda a: _keep_k_l1_weights(a, self._keep)
        exact = self.exact
        return lambda a: _l1.l1_weights(a, value, exact=exact)

    def _grid(self, p):
        if self.wbound_grid is None:
            high = max(0.9 * math.sqrt(p), 1.2)
            return np.exp(np.linspace(math.log(1.2), math.log(high), 10))
        grid = np.asarray(self.wbound_grid, dtype=np.float64)
        if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)) or grid.min() < 1:
            raise ValueError(
                f"wbound_grid={self.wbound_grid!r} must be a non-empty 1-d sequence of finite "
                "numbers >= 1."
            )
        return np.unique(grid)

    def _fit(self, X, y_idx):
        if self.wbound is not None and self.n_features_to_select is not None:
            raise ValueError(
                f"SparseKMeans got wbound={self.wbound!r} and n_features_to_select="
                f"{self.n_features_to_select!r}; give at most one of them."
            )
        raw, X = X, self._prepare(X)
        self._keep = self.n_features_to_select_
        if self._keep is not None:
            _, fit = self._fit_sparse(X, self._keep, None)
        else:
            value = self.wbound
            grid = self._grid(X.shape[1]) if value is None else None
            value, fit = self._fit_sparse(X, value, grid)
        self._store(fit)
        self.wbound_ = float(fit.weights.sum()) if self._keep is not None else float(value)
        support = None if self._keep is not None else fit.weights > 0
        self._set_selection_tied(raw, fit.bcss, support)
