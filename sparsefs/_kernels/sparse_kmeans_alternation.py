"""The sparse k-means alternation (Chang et al. Algorithm 1; sparcl's loop): pure array code.

Shared by :mod:`sparsefs.clustering._sparse_kmeans` (in memory) and
:mod:`sparsefs._dask._kmeans` (a dask X supplies the same two reads, ``stats`` and ``columns``,
as :class:`InMemory`), so neither imports the other. No scikit-learn; only the kernels
:mod:`sparsefs._kernels.kmeans` (Hartigan-Wong) and :mod:`sparsefs._kernels.sparse_kmeans`.
"""

import math
from dataclasses import dataclass

import numpy as np

from sparsefs._kernels import kmeans as _km
from sparsefs._kernels import sparse_kmeans as _k

__all__ = [
    "SAFE_RANGE",
    "Fit",
    "InMemory",
    "Solver",
    "best_alternation",
    "power_of_two_scale",
    "starts",
]

# Data whose magnitude leaves this range is divided by a power of two before fitting, so that
# sums of squares neither overflow nor underflow (exact scaling: the partition is unchanged).
SAFE_RANGE = (1e-100, 1e100)


@dataclass(frozen=True)
class Fit:
    """One converged alternation (for one sparsity value)."""

    labels: np.ndarray
    weights: np.ndarray
    bcss: np.ndarray
    means: np.ndarray
    objective_history: np.ndarray
    n_iter: int
    converged: bool

    @property
    def objective(self) -> float:
        return float(self.objective_history[-1])


def power_of_two_scale(X: np.ndarray, colmax=None, colmin=None) -> float:
    """1.0, or a power of two bringing ``max |X|`` near 1 when it is out of the safe range."""
    if X.size == 0:
        return 1.0
    hi = float(X.max() if colmax is None else colmax.max())
    lo = float(X.min() if colmin is None else colmin.min())
    amax = max(hi, -lo)
    if amax == 0 or SAFE_RANGE[0] <= amax <= SAFE_RANGE[1]:
        return 1.0
    return math.ldexp(1.0, math.frexp(amax)[1])


class InMemory:
    """How the alternation reads X (the dask path supplies the same two methods)."""

    def __init__(self, X):
        self.X = X

    def stats(self, labels, n_clusters):
        """Cluster sizes, means (every column) and the BCSS vector of a partition."""
        return _k.cluster_stats(self.X, labels, n_clusters)

    def columns(self, w):
        """The weighted k-means matrix: columns with w > 0, scaled by sqrt(w)."""
        return _km.weighted_columns(self.X, w)


@dataclass(frozen=True)
class Solver:
    """Settings of the C-step: fresh starts, algorithm, random generator."""

    n_clusters: int
    step_n_init: int
    algorithm: str
    rng: np.random.Generator
    n_starts: int = 1


def canonical(labels):
    """Labels renumbered by first appearance: equal partitions get equal arrays."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], dtype=np.intp)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    return rank[inverse]


def distinct(partitions):
    """The distinct partitions (up to the cluster numbering), first occurrences in order."""
    out, keys = [], set()
    for labels in partitions:
        key = canonical(labels).tobytes()
        if key not in keys:
            keys.add(key)
            out.append(labels)
    return out


def c_step(ops, w, labels, w_step, current, solver):
    r"""One C-step: the best, by the sparse objective, of warm and fresh weighted k-means.

    Candidates: the warm start (k-means from the means of the current partition in the weighted
    space; :math:`\sum_j w_j \mathrm{WCSS}_j` can only decrease, so its objective is at least
    ``current``) and ``step_n_init`` fresh k-means++ starts. Each distinct candidate is scored
    by its profile objective :math:`\max_{w'} \sum_j w'_j a_j(C)` (the w-step applied to its
    BCSS). Returns ``(labels, means, bcss, w', value)`` of the best (the warm one on ties), or
    None when none is strictly better than ``current`` (the current partition is then kept:
    the alternation has converged).
    """
    K = solver.n_clusters
    Xw = ops.columns(w)
    if Xw.shape[1] == 0:
        return None
    _, centres = _k.cluster_means(Xw, labels, K)
    cands = [_km.kmeans(Xw, K, init=centres, n_init=1, algorithm=solver.algorithm).labels]
    if solver.step_n_init > 0:
        cands += [f.labels for f in _km.kmeans(Xw, K, n_init=solver.step_n_init, seed=solver.rng,
                                               algorithm=solver.algorithm, return_all=True)]
    best = None
    for cand in distinct(cands):
        _, means, bcss = ops.stats(cand, K)
        w_new = w_step(bcss)
        value = float(w_new @ bcss)
        if best is None or value > best[4]:
            best = (cand, means, bcss, w_new, value)
    if best[4] <= current * (1.0 + 1e-12):
        return None
    return best


def alternate(ops, labels0, w_step, *, max_iter, tol, solver, visited=None):
    r"""Algorithm 1 of Chang et al. (and sparcl's loop) from the partition ``labels0``.

    :math:`w^1 = \mathbf 1/\sqrt p`, :math:`C^1 =` ``labels0``; then repeatedly
    :math:`w^{t+1} = ` ``w_step`` :math:`(a(C^t))` and :math:`C^{t+1}` = the C-step
    (:func:`c_step`), until :math:`\sum_j |w^{t+1}_j - w^t_j| / \sum_j |w^t_j| \le` ``tol``
    (the paper's rule), no candidate improves the objective, or ``max_iter`` w-steps. The fit
    always ends with a w-step, so the weights are optimal for the returned partition; the
    objective after each w-step never decreases (each accepted partition is strictly better,
    and the objective takes finitely many values), so the loop terminates.

    ``visited`` (a set, updated): partitions reached by earlier alternations at the same
    sparsity. An alternation that reaches one of them would repeat that trajectory: it is
    abandoned and None is returned.
    """
    K = solver.n_clusters
    labels = labels0
    _, means, bcss = ops.stats(labels, K)
    p = bcss.shape[0]
    w_prev = np.full(p, 1.0 / math.sqrt(p))
    w = w_step(bcss)
    history = [float(w @ bcss)]
    converged = _k.weight_change(w, w_prev) <= tol
    n_iter = 1
    while not converged and n_iter < max_iter:
        step = c_step(ops, w, labels, w_step, history[-1], solver)
        if step is None:
            converged = True
            break
        labels, means, bcss, w_new, value = step
        if visited is not None:
            key = canonical(labels).tobytes()
            if key in visited:
                return None
            visited.add(key)
        w_prev, w = w, w_new
        history.append(value)
        converged = _k.weight_change(w, w_prev) <= tol
        n_iter += 1
    return Fit(labels, w, bcss, means, np.asarray(history), n_iter, bool(converged))


def starts(ops, partitions, n_clusters):
    """The distinct first partitions with their BCSS vectors (to rank them per sparsity)."""
    return [(labels, ops.stats(labels, n_clusters)[2]) for labels in distinct(partitions)]


def best_alternation(ops, starts, w_step, *, max_iter, tol, solver, extra=()):
    """The alternation from the best ``solver.n_starts`` starts (and from every partition in
    ``extra``); the best fit.

    Starts are ranked by their profile objective at this sparsity (decreasing); ties of the
    final objective go to the earlier one. A start (or a later partition of its
    alternation) already reached by an earlier alternation is not followed again.
    """
    order = sorted(range(len(starts)), key=lambda r: -float(w_step(starts[r][1]) @ starts[r][1]))
    best = None
    visited = set()
    for labels0 in [starts[r][0] for r in order[:solver.n_starts]] + list(extra):
        key = canonical(labels0).tobytes()
        if key in visited:
            continue
        visited.add(key)
        fit = alternate(ops, labels0, w_step, max_iter=max_iter, tol=tol, solver=solver,
                         visited=visited)
        if fit is not None and (best is None or fit.objective > best.objective):
            best = fit
    return best
