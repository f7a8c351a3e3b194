"""SMBA: sparse-modeling representative feature ranking (Nardone, Ciaramella & Staiano, 2019)."""

import math
import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from sparsefs._kernels import smba as _kernel
from sparsefs._kernels.columns import power_of_two_exponent
from sparsefs.base import BaseSelector
from sparsefs.exceptions import ConvergenceWarning
from sparsefs.utils._sklearn_compat import Interval, StrOptions

__all__ = ["SMBA"]

#: ``keep_coef="auto"`` keeps C (M x M) up to this many features (32 MB in float64)
KEEP_COEF_MAX_FEATURES = 2000


class SMBA(BaseSelector):
    r"""Sparse-modeling representative feature ranking (SMBA; Nardone et al., 2019).

    Every feature (a column :math:`x_j` of the n x M data block) is written as a sparse linear
    combination of all the features,

    .. math::

        \min_C\ \tfrac12 \|X - XC\|_F^2 + \lambda \sum_{i=1}^M \|c^i\|_q
        \quad\text{s.t.}\quad \mathbf 1^\top C = \mathbf 1^\top \ \text{(if affine)},

    and the features whose rows :math:`c^i` of :math:`C` are used most — the largest row norms
    :math:`r_i = \|c^i\|_q`, with the same ``q`` as the penalty — are the representatives
    (SMRS of Elhamifar et al. applied to the features). :math:`\lambda = \lambda_{max}/\alpha`.
    By default (``"l1,2"``) the problem is solved exactly in the row space of X (a
    multi-task group lasso with an n x M design, ``solver="group_lasso"``, certified by its
    duality gap); ``solver="admm"`` runs the ADMM of the authors' code
    (:math:`\mu_1 = 1/\lambda`, penalty :math:`\mu_2 = \alpha`, tolerance on the mean
    :math:`|Z - C|`), in a Woodbury form: one Cholesky of an (n+1) x (n+1) matrix, about
    :math:`4(n+1)M^2` flops per iteration, never an M x M inverse (the authors invert the
    M x M system matrix). With ``penalty="l1"`` the columns of C decouple and are solved in
    column blocks of bounded memory. The labels ``y`` are
    ignored (SMBA-CSFS feeds SMBA the rows of one class).

    **What it is for.** SMBA finds *representatives*: a few features from which the others
    are (nearly) linear or affine combinations; it recovers the 10 anchors of 390 convex
    combinations at the default. It is not a discriminative ranking: it never sees the labels,
    and a feature of independent noise, which no other feature reconstructs, is a
    representative too. Leak-free, its top 10-50 features give a linear SVM 79.6 % mean
    accuracy on ALLAML, LEUKEMIA, LUNG_D and DLBCL at the default (69.3 % at the former
    alpha = 10, random features 70.8 %), against 83.4 % for Fisher's score and 92.3 % for all
    features (``docs/methods/smba.md``). Use it to compress a redundant feature set
    unsupervised, or inside SMBA-CSFS; for a ranking by class relevance use a supervised
    score.

    Parameters
    ----------
    alpha : float > 0, default=2
        :math:`\lambda = \lambda_{max}/\alpha` and the ADMM penalty. Chosen by a leak-free
        study (issue #16, ``benchmarks/study_smba_sensitivity.py``: linear SVM on the top
        10-50 features, 3-fold CV on ALLAML, LEUKEMIA, LUNG_D, DLBCL): alpha = 1 and 2 tie
        (mean accuracy 80.3 and 79.6 %), far above 5, 10, 50 (70.4, 69.3, 68.0 %, at the level
        of random features, 70.8 %), with and without the affine constraint; both keep every
        anchor of the convex-combination design. With the affine constraint, larger alpha is
        *not* sparser: near :math:`\lambda_{max}` the solution spreads over almost every row
        (7093 of 7129 non-zero on an ALLAML training fold at alpha = 10, 208 at alpha = 2).
        The authors' scripts use 10 (their grid is 5, 10, ..., 50); SMBA-CSFS's default
        per-class selector keeps ``alpha=10``.
    penalty : {"l1,2", "l1"}, default="l1,2"
        ``"l1,2"``: row-group penalty :math:`\sum_i\|c^i\|_2` (q = 2, the paper's formulation and
        SMRS); ``"l1"``: element-wise :math:`\sum_{ij}|C_{ij}|` (q = 1, the authors' code), under
        which each column of C is an independent Lasso.
    affine : bool, default=True
        Impose :math:`\mathbf 1^\top C = \mathbf 1^\top` (in the paper's equations; off in the
        authors' code). With ``penalty="l1"`` it makes the problem degenerate: :math:`C = I` for
        every :math:`\lambda` (each feature is its own cheapest affine representation), so every
        score is 1 and the ranking is the tie-break.
    center : bool, default=False
        Subtract the mean point :math:`\bar y = X\mathbf 1/M` (each sample's mean over the
        features) from every feature first, as SMRS does. Under the affine constraint the
        problem is invariant to it (only :math:`\lambda_{max}` moves).
    lambda_scale : {"dual", "smba_code"}, default="dual"
        How :math:`\lambda_{max}` is computed (all through the n x n Gram, never
        :math:`X^\top X`). ``"dual"``: the dual norm of the loss gradient at the trivial
        solution, the exact zero threshold without the affine constraint:
        :math:`\max_j \|x_j\|^2` (l1) or :math:`\max_i\|X^\top x_i\|_2` (l1,2); with the affine
        constraint the same norms of :math:`X^\top(X - \bar y \mathbf 1^\top)` (no finite
        threshold exists there). ``"smba_code"``: the l2 row norm for both penalties, as the
        authors' code — with ``"l1"`` it overshoots the true threshold by the ratio
        :math:`\max_i\|X^\top x_i\|_2 / \max_j\|x_j\|^2` (8-30 on microarray class blocks), so
        :math:`C \equiv 0` whenever ``alpha`` is below it and the published rankings are tie
        order (spec A.3).
    tol : float >= 0, default=1e-8
        ``solver="group_lasso"``: the relative duality gap, gap <= ``tol`` times
        :math:`\tfrac12\|X\|_F^2` (affine: of the translated X), a certificate of the
        objective's accuracy; the affine constraint is met to rounding (or, after the
        polish, every column sum of C within ``tol`` of 1). ADMM solvers: the stopping
        threshold on :math:`\operatorname{mean}|Z - C|` (and, affine,
        :math:`\operatorname{mean}|\mathbf 1 - Z^\top\mathbf 1|`). Computation is float64
        whatever the input dtype (1e-8 is not reachable in float32). The criterion is a mean
        over M^2 entries (the authors' rule), so it bounds a primal residual only: on a
        LUNG_DISCRETE class block (325 features) two solvers stopped at 1e-8 gave row norms up
        to 0.07 apart and a different order within the top 10 (the same at 1e-11); use 1e-10
        or below for rankings stable to the solver.
    max_iter : int >= 1, default=3000
        Maximum ADMM iterations (per column block for ``"l1"``), or, ``"group_lasso"``,
        objective evaluations plus coordinate-descent sweeps; a ``ConvergenceWarning`` when
        reached.
    tie_break : {"dual", "index", "numpy"}, default="dual"
        Order of features with equal row norms (the zero rows, typically most of them):
        ``"dual"`` by the dual certificate :math:`s_i = \|v^i\|_{q^*}` at the last ADMM iterate
        (:math:`V = Z + \Lambda/\mu_2`, :math:`q^* = \infty` for l1, 2 for l1,2: how close the
        feature is to entering the support), then by index; with ``"group_lasso"`` the same
        quantity at the ADMM's fixed point, :math:`s_i = \|c^i + g_i/(\lambda\alpha)\|`,
        :math:`g_i = x_i^\top(X - XC) - \nu^\top` the optimality residual (for a zero row
        :math:`\|g_i\|/(\lambda\alpha)`, the dual norm of the gradient over
        :math:`\lambda\alpha`; for a non-zero row :math:`r_i + 1/\alpha`); ``"index"``: by
        the lower index;
        ``"numpy"``: the authors' order, ``np.argsort(r)[::-1]`` (ascending quicksort, reversed;
        **numpy-version dependent**, for fidelity only).
    eta : float in (0, 1], default=0.99
        Representatives: the shortest prefix of the ranking whose cumulative row norm reaches
        ``eta`` times the total (the index where it is crossed is kept, as in SMRS's MATLAB).
    keep_coef : bool or "auto", default="auto"
        Keep C (M x M) in ``coef_``; ``"auto"`` keeps it up to 2000 features (32 MB).
    block_size : int or None, default=None
        ``"l1"`` only: width of the column blocks (None: as wide as ~256 MB of workspace allows,
        i.e. one block up to ~3300 features). Each block stops on its own criterion.
    solver : {"auto", "group_lasso", "admm", "working_set"}, default="auto"
        ``"auto"``: ``"group_lasso"`` for ``"l1,2"``, ``"admm"`` for ``"l1"``.
        ``"group_lasso"`` (``"l1,2"`` only, ``ValueError`` for ``"l1"``): the exact reduced
        solver. Every row of the solution lies in the row space of X (with the affine
        constraint: of the translated :math:`X - \bar y\mathbf 1^\top` plus
        :math:`\mathbf 1`), so :math:`C = BW^\top` with an orthonormal M x k basis W
        (k <= n + 1) and B solves a multi-task group lasso with an r x M design; it is solved
        through its variational form (L-BFGS-B over M weights, one (n+1) x (n+1) system per
        evaluation, the affine constraint exact) and polished if needed by block coordinate
        descent (affine: method of multipliers), stopping on the **duality gap**. About
        :math:`O(Mn^2)` per step, never an M x M array (C is formed once at the end when
        kept). ``"admm"``: the authors' ADMM on all of C (Woodbury form, two M x M arrays).
        ``"working_set"``: the same ADMM on a growing set of rows of C (the rest fixed at 0),
        which grows until every other row meets its optimality condition
        :math:`\|x_i^\top R - \nu\|_2 \le \lambda`; it pays when few rows are non-zero.
        ``n_iter_`` then sums the restricted solves. ``"admm"`` and ``"working_set"`` are
        ignored for ``"l1"``.
    n_features_to_select : int, float or None, default=None
        An int count, a float fraction in (0, 1], or ``None``: the representatives
        (``representatives_``, the ``eta`` prefix). ``None`` selects nothing (and warns
        ``NoFeatureSelectedWarning``) when C is zero, e.g. with ``lambda_scale="smba_code"`` and
        ``penalty="l1"`` at a small ``alpha``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features_in_, n_features_in_) or None
        :math:`C` in the units of the input (C is scale-free), or ``None`` when not kept
        (``keep_coef``). Rows and columns of constant features are zero.
    row_norms_ : ndarray of shape (n_features_in_,)
        :math:`r_i = \|c^i\|_q` (0 for constant features).
    dual_scores_ : ndarray of shape (n_features_in_,)
        :math:`s_i = \|v^i\|_{q^*}` at the last iterate (0 for constant features); for a zero
        row :math:`s_i \le 1/\alpha`.
    scores_ : ndarray of shape (n_features_in_,)
        Higher = better. ``"dual"``: :math:`r_i` where :math:`r_i > 0`, else
        :math:`s_i - 1/\alpha \in [-1/\alpha, 0]` (for l1,2 this is :math:`\|v^i\|_2 - 1/\alpha`
        for every row); ``"index"``: :math:`r_i`; ``"numpy"``: rank-valued (M for the first, so
        that the version-dependent order is kept exactly). Constant features: ``-inf``.
    ranking_ : ndarray of shape (n_features_in_,)
        1 = best.
    support_ : ndarray of shape (n_features_in_,), dtype bool
    representatives_ : ndarray of int
        The ``eta`` prefix of the ranking (feature indices, best first).
    n_iter_ : int
        ADMM iterations (the largest over column blocks), or ``"group_lasso"`` evaluations
        plus sweeps.
    converged_ : bool
    history_ : dict
        ADMM: ``"err1"``: mean :math:`|Z - C|` per iteration; ``"err2"``: mean
        :math:`|1 - \mathbf 1^\top Z|` per iteration (zeros when not affine).
        ``"group_lasso"``: ``"gap"`` (also under ``"err1"``, the stopping quantity): the
        relative duality gap per evaluation / sweep; ``"err2"``: the largest column-sum
        error of C per multiplier step of the affine polish (empty when not polished).
    solver_ : str
        The solver that ran.
    lambda_ : float
        :math:`\lambda` in the units of the input (:math:`X^2`; ``inf`` if it overflows).
    lambda_max_ : float
        :math:`\lambda_{max}`, same units.
    n_features_to_select_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X is a DataFrame with string column names.

    Notes
    -----
    * **The authors' code variant** (for fidelity, not recommended):
      ``SMBA(alpha=10, penalty="l1", affine=False, lambda_scale="smba_code",
      tie_break="numpy", max_iter=3000)``; ``tie_break="index"`` gives a reproducible variant.
      The SMRS original is ``SMBA(alpha=5, penalty="l1,2", affine=True, center=True,
      tol=1e-7, max_iter=5000, eta=0.9)``.
    * **Constant features** (including all-zero ones) are removed before the fit: they carry no
      information about the samples. They score ``-inf``, rank last (by index) and have zero
      rows and columns in ``coef_``. At least 2 samples are required.
    * **Scale.** C is invariant to :math:`X \to cX` (:math:`\lambda_{max}` scales with
      :math:`c^2`), so X is internally divided by a power of two near its largest magnitude:
      values of 1e300 or 1e-300 give the same scores as the unscaled data.
    * **Stopping** is at most ``max_iter`` iterations (the authors' loop runs
      ``max_iter - 1``). For ``"l1"`` in several column blocks every block stops on its own
      criterion; the differences to the global rule are far below ``tol``.
    * **Sparse X** (CSR/CSC, ``{array-like, sparse matrix}``) is accepted; its constant
      columns are found on the sparse matrix, then the varying ones are densified (float64):
      both solvers work on dense arrays the size of X whatever its format (the group-lasso
      basis of X's row space is M x (n+1), the ADMM's Woodbury factor
      :math:`U = [X^\top, \mathbf 1]` too, and row centring fills X in), so a sparse fit needs
      the memory of the dense one and gives exactly its result.
    * Memory: ``"group_lasso"`` needs O(M n) (plus C itself when kept); the ``"l1,2"``
      ADMM keeps two M x M float64 arrays (1.6 GB at M = 10 000); ``"l1"`` needs
      O(M B + M n).

    References
    ----------
    .. [1] D. Nardone, A. Ciaramella and A. Staiano, "A sparse-modeling based approach for
       class specific feature selection", PeerJ Computer Science 5:e237, 2019.
    .. [2] E. Elhamifar, G. Sapiro and R. Vidal, "See all by looking at a few: sparse modeling
       for finding representative objects", CVPR 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsefs.selection import SMBA
    >>> rng = np.random.default_rng(0)
    >>> basis = rng.standard_normal((20, 3))
    >>> X = np.hstack([basis, basis @ rng.uniform(0.2, 1, (3, 27))])  # 30 features, rank 3
    >>> smba = SMBA(alpha=5, n_features_to_select=3).fit(X)
    >>> smba.scores_.shape, bool(smba.converged_)
    ((30,), True)
    >>> int(smba.support_.sum())
    3
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "penalty": [StrOptions({"l1,2", "l1"})],
        "affine": ["boolean"],
        "center": ["boolean"],
        "lambda_scale": [StrOptions({"dual", "smba_code"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tie_break": [StrOptions({"dual", "index", "numpy"})],
        "eta": [Interval(Real, 0, 1, closed="right")],
        "keep_coef": ["boolean", StrOptions({"auto"})],
        "block_size": [Interval(Integral, 1, None, closed="left"), None],
        "solver": [StrOptions({"auto", "group_lasso", "admm", "working_set"})],
    }
    _supervised = False
    # sparse X is accepted and densified after the constant columns are dropped: the solvers'
    # M x (n+1) basis / Woodbury factor is dense for any input (Notes)
    _accept_sparse = ("csr", "csc")

    def __init__(
        self,
        alpha=2.0,
        *,
        penalty="l1,2",
        affine=True,
        center=False,
        lambda_scale="dual",
        tol=1e-8,
        max_iter=3000,
        tie_break="dual",
        eta=0.99,
        keep_coef="auto",
        block_size=None,
        solver="auto",
        n_features_to_select=None,
    ):
        self.alpha = alpha
        self.penalty = penalty
        self.affine = affine
        self.center = center
        self.lambda_scale = lambda_scale
        self.tol = tol
        self.max_iter = max_iter
        self.tie_break = tie_break
        self.eta = eta
        self.keep_coef = keep_coef
        self.block_size = block_size
        self.solver = solver
        self.n_features_to_select = n_features_to_select

    def _solver(self, q):
        if self.solver == "auto":
            return "group_lasso" if q == 2 else "admm"
        if self.solver == "group_lasso" and q != 2:
            raise ValueError(
                "solver='group_lasso' solves penalty='l1,2' only; with penalty='l1' use "
                "solver='auto' or 'admm' (the columns decouple into Lassos, solved in blocks)."
            )
        return self.solver

    def _fit_dask(self, X, y_idx):
        """Fit on a dask array: ``penalty="l1"`` only, its column blocks as dask tasks.

        X (few samples) is gathered; the M x M work is split by column blocks
        (:func:`sparsefs._dask._smba.smba_l1`), which gives the in-memory answer exactly.
        """
        from sparsefs._dask._smba import gather_finite, smba_l1

        if self.penalty != "l1":
            raise TypeError(
                f"{type(self).__name__} accepts dask arrays with penalty='l1' only (its column "
                f"blocks are independent); penalty={self.penalty!r} couples all columns: pass "
                "X.compute()."
            )
        self._solver(1)

        def solve(Xv, q, keep):
            return smba_l1(Xv, float(self.alpha), affine=bool(self.affine),
                           lambda_scale=self.lambda_scale, tol=float(self.tol),
                           max_iter=int(self.max_iter), block_size=self.block_size,
                           keep_coef=keep)

        return self._fit(gather_finite(X, type(self).__name__), y_idx, _solve=solve)

    def _solve(self, Xv, q, keep):
        return _kernel.smba(
            Xv,
            float(self.alpha),
            q=q,
            affine=bool(self.affine),
            lambda_scale=self.lambda_scale,
            tol=float(self.tol),
            max_iter=int(self.max_iter),
            block_size=self.block_size,
            keep_coef=keep,
            solver=self._solver(q),
        )

    def _blas_flops(self, X) -> float:
        """Flops of one large product of the solver: ADMM ``2 (n + 1) M^2 / 10`` (a tenth of
        an iteration: its products are thin, inner dimension <= n + 1, and repeated hundreds
        of times; measured on the shared 2-core machine, the ADMM at 100 x 1000, 2.02e8 per
        iteration, took 0.15-0.18 s per iteration threaded against 0.011-0.021 s on one
        thread); group lasso ``2 M n^2``, the product :math:`A'R'` of one evaluation (with
        the n x n systems of the same order: at 1000 x 5000, 1e10 flops, threads pay; at
        100 x 10 000, 2e8, one thread: 196 s threaded against 44 s on a loaded machine)."""
        n, m = X.shape
        try:
            solver = self._solver(1 if self.penalty == "l1" else 2)
        except ValueError:  # raised again, with its message, by _fit
            return 0.0
        return 0.2 * (n + 1) * m**2 if solver == "admm" else 2.0 * m * (n + 1) ** 2

    def _fit(self, X, y_idx, _solve=None):
        n_samples, n_features = X.shape
        if n_samples < 2:
            raise ValueError(
                f"SMBA needs at least 2 samples to represent features; got n_samples={n_samples}."
            )
        q = 1 if self.penalty == "l1" else 2
        solver = self._solver(q)
        if sp.issparse(X):  # the solvers need X's varying columns dense (class Notes)
            Xv, varying = _varying_dense(X)
            idx = np.flatnonzero(varying)
        else:
            X = np.asarray(X, dtype=np.float64)
            varying = np.ptp(X, axis=0) > 0
            idx = np.flatnonzero(varying)
            Xv = np.array(X[:, idx], dtype=np.float64, order="C")
        # C is invariant to X -> cX: divide by a power of two near max |X| (exact)
        exponent = power_of_two_exponent(Xv, above=True)
        if exponent:
            Xv = np.ldexp(Xv, -exponent)
        if self.center and idx.size:
            Xv -= Xv.mean(axis=1, keepdims=True)
        keep = (
            n_features <= KEEP_COEF_MAX_FEATURES if self.keep_coef == "auto"
            else bool(self.keep_coef)
        )
        res = (self._solve if _solve is None else _solve)(Xv, q, keep)
        if not res.converged and solver == "group_lasso":
            last = f"{res.gap[-1]:.3g}" if res.gap.size else "n/a"
            warnings.warn(
                f"SMBA's group-lasso solver did not reach tol={self.tol:g} (relative duality "
                f"gap) in max_iter={self.max_iter} evaluations and sweeps (last gap={last}"
                + (f", column-sum error={res.err2[-1]:.3g}" if res.err2.size else "")
                + "); increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        elif not res.converged:
            warnings.warn(
                f"SMBA's ADMM did not reach tol={self.tol:g} in max_iter={self.max_iter} "
                f"iterations (last err1={res.err1[-1]:.3g}"
                + (f", err2={res.err2[-1]:.3g}" if self.affine else "")
                + "); increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        r = np.zeros(n_features)
        s = np.zeros(n_features)
        r[idx] = res.row_norms
        s[idx] = res.dual
        if keep:
            coef = np.zeros((n_features, n_features))
            if idx.size:
                coef[np.ix_(idx, idx)] = res.coef
            self.coef_ = coef
        else:
            self.coef_ = None
        t = 1.0 / float(self.alpha)
        if self.tie_break == "dual":
            scores = np.where(r > 0, r, np.minimum(s - t, 0.0))
        elif self.tie_break == "index":
            scores = r.copy()
        else:
            order_v = idx[np.argsort(r[idx])[::-1]]
            scores = np.zeros(n_features)
            scores[order_v] = np.arange(idx.size, 0, -1, dtype=np.float64)
        scores[~varying] = -np.inf
        self.row_norms_ = r
        self.dual_scores_ = s
        self.n_iter_ = int(res.n_iter)
        self.converged_ = bool(res.converged)
        if solver == "group_lasso":
            self.history_ = {"gap": res.gap, "err1": res.gap, "err2": res.err2}
        else:
            self.history_ = {"err1": res.err1, "err2": res.err2}
        self.solver_ = solver
        with np.errstate(over="ignore"):
            self.lambda_ = float(np.ldexp(res.lambda_, 2 * exponent))
            self.lambda_max_ = float(np.ldexp(res.lambda_max, 2 * exponent))
        if not math.isfinite(self.lambda_):
            self.lambda_ = math.inf
        # the representatives: the eta prefix of the final ranking (row norms decrease along it)
        order = np.argsort(-scores, kind="stable")
        self.representatives_ = _kernel.representatives_prefix(r, order, float(self.eta))
        support = None
        if self.n_features_to_select_ is None:
            support = np.zeros(n_features, dtype=bool)
            support[self.representatives_] = True
        self._set_selection(scores, support)
        return self


def _varying_dense(X) -> tuple[np.ndarray, np.ndarray]:
    """The non-constant columns of the sparse ``X`` as a C-ordered float64 array, and the mask.

    Constant columns are found from the sparse column extrema (the implicit zeros included),
    so only the varying columns are densified; the values are those of the dense path.
    """
    X = sp.csc_array(X)
    extrema = []
    for r in (X.max(axis=0), X.min(axis=0)):
        r = r.toarray() if sp.issparse(r) else np.asarray(r)
        extrema.append(np.asarray(r, dtype=np.float64).ravel())
    varying = extrema[0] > extrema[1]
    Xv = np.asarray(X[:, np.flatnonzero(varying)].toarray(order="C"), dtype=np.float64)
    return np.ascontiguousarray(Xv), varying
