"""Sparse kernel optimal scoring: kernel discriminant analysis with sparse feature weights."""

import threading
import warnings
from contextlib import nullcontext
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from sparsefs._kernels import sparse_kos as _k
from sparsefs._kernels import threads as _threads
from sparsefs._kernels.columns import duplicate_column_groups
from sparsefs.base import BaseSelectingClassifier
from sparsefs.exceptions import ConvergenceWarning
from sparsefs.utils._progress import fit_progress
from sparsefs.utils._sklearn_compat import Interval, StrOptions

__all__ = ["SparseKOSClassifier"]

#: score given to features that are constant on the training data (below every |w|)
_CONSTANT_SCORE = -1.0


class SparseKOSClassifier(BaseSelectingClassifier):
    r"""Sparse kernel optimal scoring (Lapanowski & Gaynanova, 2019), binary and multiclass.

    Kernel discriminant analysis by optimal scoring with a Gaussian kernel whose features carry
    weights :math:`w \in [-1, 1]^p` under an :math:`\ell_1` penalty. A weight of 0 removes the
    feature from the kernel, so the method selects features that matter **non-linearly and in
    interaction** (concentric rings, XOR-like patterns) where linear filters see nothing.

    **Model.** With standardised training data (rows :math:`x_i`), class indicator
    :math:`Y` (n x K), the weighted kernel
    :math:`(K_w)_{ij} = \exp(-\sum_l w_l^2 (x_{il} - x_{jl})^2/\sigma^2)`, the centring
    :math:`C = I - 11^\top/n` and :math:`M_w = CK_wC`, sparse KOS solves

    .. math::

        \min_{A \in \mathbb{R}^{n\times q},\ w \in [-1,1]^p}\
        \frac1n\|Y\Theta - M_wA\|_F^2 + \gamma\,\mathrm{tr}\,A^\top(M_w + \varepsilon I)A
        + \lambda\|w\|_1, \qquad q = K - 1,\ \varepsilon = 10^{-5}.

    For :math:`w = 1` and :math:`\lambda = 0` it is kernel optimal scoring (KOS), whose
    solution is the closed form (5), :math:`A = (M^2 + n\gamma(M + \varepsilon I))^{-1}MY\Theta`.
    The paper's Algorithm 1 alternates (5) with a weight update: :math:`K_w` is linearised
    element-wise at the current :math:`w`, which makes the problem in :math:`w` the box-constrained
    lasso :math:`\min w^\top Qw - 2\beta^\top w + \lambda\|w\|_1` (14)-(15), solved by coordinate
    descent with the update (16), :math:`w_k \leftarrow \Pi_{[-1,1]}(S_{\lambda/2}(b_k)/Q_{kk})`.
    A new point is projected by (6), :math:`P(x) = A^\top C(k_x - K1/n) \in \mathbb{R}^q`, and
    assigned to the class with the nearest projected centroid (7).

    **Multiclass: derivation.** The paper is binary. Optimal scoring with :math:`q` score
    vectors minimises the objective over the scores too, under
    :math:`\Theta^\top D_\pi\Theta = I_q` and :math:`\pi^\top\Theta = 0`
    (:math:`D_\pi = \mathrm{diag}(\pi)`, :math:`\pi_c = n_c/n`; the scores are centred and
    normalised, :math:`Z = Y\Theta` has :math:`1^\top Z = 0`, :math:`Z^\top Z/n = I_q`).

    1. *With all* :math:`q = K-1` *score vectors the score step is trivial.* The admissible
       :math:`\Theta` are the :math:`D_\pi`-orthonormal bases of the
       :math:`(K-1)`-dimensional :math:`D_\pi`-complement of :math:`1`, so any two differ by an
       orthogonal :math:`R` (:math:`\Theta' = \Theta R`). Replacing :math:`A` by :math:`AR`
       leaves :math:`\|Y\Theta R - M_wAR\|_F` and :math:`\mathrm{tr}\,R^\top A^\top(M_w +
       \varepsilon I)AR` unchanged: every admissible :math:`\Theta` attains the same minimum,
       with the same :math:`w`, and the objective depends on the scores only through
       :math:`ZZ^\top = n(Y(Y^\top Y)^{-1}Y^\top - 11^\top/n)`. We take the Helmert-type basis
       (:func:`~sparsefs._kernels.sparse_kos.score_vectors`).
    2. *One weight vector shared by all discriminants.* :math:`w` enters every column of
       :math:`M_wA` through the same kernel, and the objective is a sum over columns, so the
       closed form (5) holds column by column and linearising
       :math:`M_wa_c \approx M_{w_0}a_c + T_c(w - w_0)` gives the quadratic model with
       :math:`Q = \frac1n\sum_c T_c^\top T_c` and
       :math:`\beta = \frac1n\sum_c T_c^\top(Z_c - M_{w_0}a_c + T_cw_0) - \frac\gamma2\sum_c
       T_c^\top a_c`; update (16) and :math:`\lambda_{\max} = 2\|\beta\|_\infty` (Lemma 1) are
       unchanged.
    3. *Classification.* The projection is :math:`q`-dimensional and the nearest projected
       centroid (Euclidean) is rotation-invariant, hence also independent of the basis.
    4. *K = 2 is exactly the paper.* Then :math:`q = 1` and
       :math:`\Theta = \pm(\sqrt{n_2/n_1}, -\sqrt{n_1/n_2})^\top`, the paper's
       :math:`\hat\theta`; :math:`A = \alpha`, the sums over :math:`c` have one term, and (4)-(7),
       (14)-(16) are the paper's formulas verbatim.

    **Tuning (Section 5), in the order** :math:`\sigma^2 \to \gamma \to \lambda`. By default
    (``sigma2_selection="joint"``) the paper's tuning as the packages run it, described next,
    which cross-validates a :math:`\lambda` path at every :math:`\sigma^2` and picks the pair;
    ``sigma2_selection="kos"`` chooses :math:`\sigma^2` first, by the cross-validated error of
    KOS (:math:`w = 1`), and cross-validates the :math:`\lambda` path at that :math:`\sigma^2`
    only (3-4 times cheaper, not always the paper's selections).
    For each candidate :math:`\sigma^2` (the 0.05, 0.1, 0.2, 0.3, 0.5 quantiles of the squared
    between-class distances on the standardised training data), :math:`\gamma` is set by
    Stabilization on :math:`M = CK_1C` of the full training data (a shrinkage intensity,
    :func:`~sparsefs._kernels.sparse_kos.stabilization_ridge`), :math:`\lambda_{\max}` by
    Lemma 1 at :math:`w = 1`, and a grid of ``n_alphas`` :math:`\lambda` values in
    :math:`[10^{-10}\lambda_{\max}, \lambda_{\max}]`. Stratified ``cv``-fold cross-validation
    (each training fold re-standardised with its own statistics) runs the warm-started
    :math:`\lambda` path on every fold; the error is the number misclassified over all folds
    divided by ``n`` (a fold whose fit has :math:`w = 0` gets all its points wrong). The pair
    (:math:`\sigma^2, \lambda`) with the smallest error is chosen (ties: the first
    :math:`\sigma^2` in quantile order, the largest :math:`\lambda`). The final fit follows the
    **same warm-started path** on the full training data up to the chosen :math:`\lambda`:
    refitting cold from :math:`w = 1` at that :math:`\lambda`, as the R packages do, can end at
    :math:`w = 0` (spec 2.9 item 4; ``warm_start_path=False`` reproduces it).

    Dense X only (sparse X is a ``TypeError``): every feature is standardised (centred)
    before the Gaussian kernel, which makes X dense.

    Parameters
    ----------
    sigma2 : float > 0 or None, default=None
        Kernel bandwidth :math:`\sigma^2` (on the standardised data). ``None``: chosen by
        cross-validation among ``sigma2_quantiles`` of the between-class distances.
    ridge : float > 0 or None, default=None
        The ridge :math:`\gamma`. ``None``: Stabilization, for each :math:`\sigma^2`.
    alpha : float >= 0 or None, default=None
        The sparsity penalty :math:`\lambda`. ``None``: cross-validation over the grid.
        ``0``: plain KOS, :math:`w = 1` (no weight optimisation; every non-constant feature is
        kept). A positive value is reached along the warm-started grid path (grid values below
        it, then ``alpha``) unless ``warm_start_path=False``.
    n_features_to_select : int, float or None, default=None
        ``None``: the method's own rule, the features with :math:`w_l \ne 0` at the tuned
        :math:`\lambda`. An int (or a fraction of the features, rounded down, at least 1) keeps
        the top of the ranking by :math:`|w_l|` at the tuned :math:`\lambda` (ties: lower
        index); weights outside the kept set are set to 0 and the dual coefficients refitted by
        (5) at that :math:`w`, so the classifier uses only the kept features. If fewer than that
        many weights are nonzero, zero-weight features fill the count (lowest index first); they
        do not enter the model.
    sigma2_quantiles : sequence of float in (0, 1], default=(0.05, 0.1, 0.2, 0.3, 0.5)
        Candidate quantiles for ``sigma2=None``.
    sigma2_rule : {"paper", "package"}, default="paper"
        ``"paper"``: quantiles of squared distances; ``"package"``: quantiles of unsquared
        distances used directly as :math:`\sigma^2` (what sparseKOS/biClassify compute).
    n_alphas : int, default=20
        Size of the :math:`\lambda` grid.
    alpha_min_ratio : float, default=1e-10
        Smallest grid value over :math:`\lambda_{\max}`.
    alpha_grid : {"linear", "log"}, default="linear"
        Equally spaced (paper, biClassify vignette) or geometric (sparseKOS 2018, biClassify
        since 2020) grid.
    alpha_ties : {"largest", "smallest"}, default="largest"
        Among equal CV errors take the largest :math:`\lambda` (sparsest; biClassify) or the
        smallest (sparseKOS 2018).
    cv : int, default=5
        Number of stratified folds (reduced to the largest class size if that is smaller).
    warm_start_path : bool, default=True
        Follow the warm-started :math:`\lambda` path in the final fit (and for a given
        ``alpha``); ``False`` refits from :math:`w = 1` at the chosen :math:`\lambda`.
    sigma2_selection : {"joint", "kos"}, default="joint"
        ``"joint"`` (the default): **the paper's tuning** as the packages run it - the
        (:math:`\sigma^2, \lambda`) pair of smallest CV error over a :math:`\lambda` path per
        :math:`\sigma^2` (25 cross-validated paths; about 10 CPU s at 72 x 7129).
        ``"kos"``: strictly hierarchical, :math:`\sigma^2 \to \gamma \to \lambda` -
        :math:`\sigma^2` first by the CV error of KOS (:math:`w = 1`), then the :math:`\lambda`
        path at that :math:`\sigma^2` only: 5 cross-validated paths instead of 25, 3-4 times
        cheaper. On the reproduction's splits the two select the same features in 20/20 splits
        of Simulation 1 but only 13-16/20 of the UCI sets (blood transfusion: test error 0.313
        against 0.286, and the paper's weight-size claim lost), so the paper's tuning stays the
        default (docs/methods/sparse_kos.md, "The default").
    line_search : {"region", "scale", "none"}, default="region"
        Safeguard of the weight step when :math:`F` does not decrease (the paper suggests a line
        search): ``"region"`` re-minimises the linearised model in a halved box around
        :math:`w`; ``"scale"`` halves the step (spec 2.7); ``"none"`` takes every step
        (Algorithm 1 as printed; :math:`F` may increase). See
        :func:`~sparsefs._kernels.sparse_kos.sparse_kos`.
    acceleration : {"extrapolate", "none"}, default="extrapolate"
        ``"extrapolate"``: after two outer steps in the same direction, try Aitken's jump
        towards the limit of the linearly converging alternation and keep it only when
        :math:`F` decreases (monotone, supports changed only by the weight step; 2-5 times
        fewer outer iterations, the same selections on the paper's designs - see
        docs/methods/sparse_kos.md); ``"none"``: the paper's plain Algorithm 1.
    closed_form : {"paper", "package"}, default="paper"
        ``"paper"``: (5) with :math:`\varepsilon`; ``"package"``:
        :math:`(M + n\gamma I)A = Y\Theta` (biClassify), equal on the range of :math:`M`.
    solver : {"auto", "cholesky", "eigh", "cg"}, default="auto"
        Linear algebra for the closed form: ``"auto"`` is Cholesky for ``"paper"`` and
        warm-started conjugate gradients for ``"package"``; ``"cg"`` needs
        ``closed_form="package"``.
    rule : {"nearest", "lda"}, default="nearest"
        Classification of projections: nearest projected class centroid (the paper's (7)) or
        LDA on the training projections with class-proportion priors (the packages).
    standardize : bool, default=True
        Standardise features with the training mean and standard deviation (``ddof=0``), as
        both packages do; cross-validation re-standardises each training fold.
    eps : float, default=1e-5
        The :math:`\varepsilon` of the ridge term.
    max_iter : int, default=100
        Outer iterations of Algorithm 1 per :math:`\lambda`.
    tol : float, default=1e-5
        Outer stopping tolerance on :math:`|F^{(t)} - F^{(t-1)}|`.
    cd_tol : float, default=1e-6
        Coordinate-descent tolerance on the Euclidean change of :math:`w` over a sweep.
    cd_max_sweeps : int, default=10000
        Coordinate-descent sweep limit.
    random_state : int, RandomState instance or None, default=None
        Shuffles the cross-validation folds (reproducibly for an int). ``None``: unshuffled
        stratified folds, so two fits with the defaults give the same model.
    n_jobs : int or None, default=None
        Threads for the cross-validation: its (fold, :math:`\sigma^2`) warm paths are
        independent and run concurrently, each on one BLAS thread (the fit then holds the
        BLAS pools at one thread). ``None``: 1 (scikit-learn's convention: unless inside
        ``joblib.parallel_config(n_jobs=k)``) and 1: sequential, BLAS untouched; -1: every CPU
        available to the process (docs/contract.md, "n_jobs"). The result does not depend on
        it (each path is computed alone; only BLAS rounding can differ between thread counts).
    verbose : bool or int, default=False
        Show a progress bar (tqdm, on stderr) over the cross-validated paths of the tuning -
        the long part of a tuned fit (minutes at n = 3000 with the paper's defaults): one step
        per (fold, :math:`\sigma^2`) path, with the number of outer iterations so far. It
        does not change the result.

    Attributes
    ----------
    weights_ : ndarray of shape (n_features_in_,)
        The feature weights :math:`w` used by the model, in [0, 1] (the sign of :math:`w` is
        not identifiable, :math:`K_w` depends on :math:`w^2`; it is reported as
        :math:`|w|`). Zero off the support.
    scores_ : ndarray of shape (n_features_in_,)
        :math:`|w_l|` at the tuned :math:`\lambda` (before any truncation by an int
        ``n_features_to_select``); features constant on the training data score -1 and rank
        last.
    ranking_, support_, n_features_to_select_
        The selection contract; with ``n_features_to_select=None`` the support is
        :math:`w \ne 0`.
    dual_coef_ : ndarray of shape (n_samples_fit, n_classes - 1)
        :math:`A`, the dual coefficients (one column per score vector; for two classes the
        paper's :math:`\alpha`).
    score_vectors_ : ndarray of shape (n_classes, n_classes - 1)
        The optimal scores :math:`\Theta`.
    centroids_ : ndarray of shape (n_classes, n_classes - 1)
        Projected class centroids :math:`\mu_c` of the training points.
    sigma2_, ridge_, alpha_ : float
        The :math:`\sigma^2`, :math:`\gamma`, :math:`\lambda` of the final model.
    alpha_max_ : float
        :math:`\lambda_{\max}` at ``sigma2_`` (nan for plain KOS).
    sigma2_grid_ : ndarray of shape (n_sigma2,)
    ridge_grid_ : ndarray of shape (n_sigma2,)
        :math:`\gamma` for each candidate :math:`\sigma^2`.
    alpha_grid_ : ndarray of shape (n_sigma2, n_path)
        The :math:`\lambda` path of each :math:`\sigma^2`: the ``n_alphas`` grid values, or the
        grid values below a given ``alpha`` then ``alpha`` (NaN-padded; NaN rows for a
        :math:`\sigma^2` never path-evaluated).
    cv_errors_ : ndarray of shape (n_sigma2, n_path) or None
        Cross-validated misclassification rate of every (:math:`\sigma^2, \lambda`) on the
        paths (NaN where a path is shorter or a :math:`\sigma^2` was not path-evaluated);
        ``None`` when no :math:`\lambda` path was cross-validated.
    sigma2_cv_errors_ : ndarray of shape (n_sigma2,) or None
        The CV error that ranked each :math:`\sigma^2`: the best over its :math:`\lambda`
        path (``"joint"``), the error at a given ``alpha``, or the KOS error
        (``sigma2_selection="kos"`` and plain KOS); ``None`` for a single :math:`\sigma^2`.
    path_weights_ : ndarray of shape (n_path_final, n_features_in_)
        :math:`|w|` along the final warm-started path (last row: the tuned :math:`\lambda`).
    n_iter_ : int
        Outer iterations of Algorithm 1 at the final :math:`\lambda` (at least 1: plain KOS,
        or a path already at :math:`w = 0`, counts its one closed-form solve).
    objective_ : ndarray
        :math:`F` at the start and after each outer iteration at the final :math:`\lambda`
        (non-increasing).
    converged_ : bool
    mean_, scale_ : ndarray of shape (n_features_in_,)
        Standardisation (``x_std = (x - mean_) / scale_``).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray
        Defined when X is a DataFrame with string column names.

    Notes
    -----
    The bandwidth rule, the ridge formula and the known differences between the paper and the R
    packages sparseKOS / biClassify are listed in ``docs/methods/sparse_kos.md``. The estimator
    keeps the standardised training columns with nonzero weight (a kernel method predicts from
    them). Cost: :math:`O(n^2 p)` per kernel and Jacobian (GEMMs), :math:`O(n^3)` per closed
    form, :math:`O(\min(p^2, nqp))` per coordinate-descent sweep (the weight model's
    :math:`Q` is kept factored when :math:`p > nq`, as on microarrays); memory
    :math:`O(n^2 + nqp)`. When at most
    3/4 of the rows are distinct on the features with :math:`w_l \ne 0` (integer-coded or
    few remaining features), the kernel is kept as the kernel of the distinct rows and the
    closed form solved at that size, exactly
    (:func:`~sparsefs._kernels.sparse_kos.weighted_kernel`). The paper's joint tuning runs
    25 warm paths (5 :math:`\sigma^2` x 5 folds) of about 100-150 outer iterations each at
    n = 3000, one :math:`O(n^3)` Cholesky factorisation per iteration on the dense stretches:
    ``n_jobs`` runs the paths in parallel. Fits with at most 1500 rows run on one BLAS thread
    (threadpoolctl): threads gain nothing at that size, and idle OpenBLAS threads spin on a
    loaded machine.

    References
    ----------
    .. [1] A. F. Lapanowski and I. Gaynanova, "Sparse feature selection in kernel discriminant
       analysis via optimal scoring", AISTATS 2019, PMLR 89:1704-1713 (arXiv:1902.04248).
    .. [2] T. Hastie, A. Buja and R. Tibshirani, "Penalized discriminant analysis", Annals of
       Statistics 23(1):73-102, 1995 (optimal scoring with several score vectors).
    .. [3] G. I. Allen, "Automatic feature selection via weighted kernels and regularization",
       Journal of Computational and Graphical Statistics 22(2):284-299, 2013.
    .. [4] T. Lancewicki, "Regularization of the kernel matrix via covariance matrix shrinkage
       estimation", arXiv:1707.06156, 2017.

    Examples
    --------
    >>> from sparsefs.classification import SparseKOSClassifier
    >>> from sparsefs.datasets import make_kos_rings
    >>> data = make_kos_rings(random_state=0)
    >>> clf = SparseKOSClassifier(random_state=0).fit(data.X, data.y)
    >>> clf.support_.tolist()
    [True, True, False, False]
    >>> float(clf.score(data.X, data.y)) > 0.95
    True
    """

    _dense_reason = (
        "it standardises (centres) every feature, which makes X dense, and its kernel and "
        "weight steps work on the dense standardised columns"
    )
    _outputs = frozenset({"weights_"})
    _parameter_constraints: ClassVar[dict] = {
        **BaseSelectingClassifier._parameter_constraints,
        "sigma2": [Interval(Real, 0, None, closed="neither"), None],
        "ridge": [Interval(Real, 0, None, closed="neither"), None],
        "alpha": [Interval(Real, 0, None, closed="left"), None],
        "sigma2_quantiles": ["array-like"],
        "sigma2_rule": [StrOptions({"paper", "package"})],
        "n_alphas": [Interval(Integral, 1, None, closed="left")],
        "alpha_min_ratio": [Interval(Real, 0, 1, closed="right")],
        "alpha_grid": [StrOptions({"linear", "log"})],
        "alpha_ties": [StrOptions({"largest", "smallest"})],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "warm_start_path": ["boolean"],
        "sigma2_selection": [StrOptions({"joint", "kos"})],
        "line_search": [StrOptions({"region", "scale", "none"})],
        "acceleration": [StrOptions({"extrapolate", "none"})],
        "closed_form": [StrOptions({"paper", "package"})],
        "solver": [StrOptions({"auto", "cholesky", "eigh", "cg"})],
        "rule": [StrOptions({"nearest", "lda"})],
        "standardize": ["boolean"],
        "eps": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "cd_tol": [Interval(Real, 0, None, closed="left")],
        "cd_max_sweeps": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        sigma2=None,
        ridge=None,
        alpha=None,
        *,
        n_features_to_select=None,
        sigma2_quantiles=(0.05, 0.1, 0.2, 0.3, 0.5),
        sigma2_rule="paper",
        n_alphas=20,
        alpha_min_ratio=1e-10,
        alpha_grid="linear",
        alpha_ties="largest",
        cv=5,
        warm_start_path=True,
        sigma2_selection="joint",
        line_search="region",
        acceleration="extrapolate",
        closed_form="paper",
        solver="auto",
        rule="nearest",
        standardize=True,
        eps=1e-5,
        max_iter=100,
        tol=1e-5,
        cd_tol=1e-6,
        cd_max_sweeps=10_000,
        random_state=None,
        n_jobs=None,
        verbose=False,
    ):
        self.sigma2 = sigma2
        self.ridge = ridge
        self.alpha = alpha
        self.n_features_to_select = n_features_to_select
        self.sigma2_quantiles = sigma2_quantiles
        self.sigma2_rule = sigma2_rule
        self.n_alphas = n_alphas
        self.alpha_min_ratio = alpha_min_ratio
        self.alpha_grid = alpha_grid
        self.alpha_ties = alpha_ties
        self.cv = cv
        self.warm_start_path = warm_start_path
        self.sigma2_selection = sigma2_selection
        self.line_search = line_search
        self.acceleration = acceleration
        self.closed_form = closed_form
        self.solver = solver
        self.rule = rule
        self.standardize = standardize
        self.eps = eps
        self.max_iter = max_iter
        self.tol = tol
        self.cd_tol = cd_tol
        self.cd_max_sweeps = cd_max_sweeps
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ----------------------------------------------------------------------------------------
    # fit
    # ----------------------------------------------------------------------------------------

    def _solver_kw(self) -> dict:
        solver = self.solver
        if solver == "auto":
            solver = "cholesky" if self.closed_form == "paper" else "cg"
        if solver == "cg" and self.closed_form == "paper":
            raise ValueError(
                "solver='cg' needs closed_form='package' (the paper's closed form (5) is "
                "ill-conditioned for conjugate gradients); got closed_form='paper'."
            )
        return {"eps": float(self.eps), "form": self.closed_form, "solver": solver}

    def _algo_kw(self) -> dict:
        return {
            **self._solver_kw(),
            "max_iter": self.max_iter,
            "tol": self.tol,
            "cd_tol": self.cd_tol,
            "cd_max_sweeps": self.cd_max_sweeps,
            "line_search": self.line_search,
            "acceleration": self.acceleration,
        }

    def _check_quantiles(self) -> np.ndarray:
        qs = np.asarray(self.sigma2_quantiles, dtype=np.float64).ravel()
        if qs.size == 0 or not np.all((qs > 0) & (qs <= 1)):
            raise ValueError(
                f"sigma2_quantiles={self.sigma2_quantiles!r} must be a non-empty sequence of "
                "numbers in (0, 1]."
            )
        return qs

    def _alpha_path(self, alpha_max: float) -> np.ndarray:
        """The lambda values one path visits: the grid, or the grid below ``alpha`` then it."""
        lo = self.alpha_min_ratio * alpha_max
        if self.n_alphas == 1:
            grid = np.array([alpha_max])
        elif self.alpha_grid == "log" and alpha_max > 0:
            grid = np.geomspace(lo, alpha_max, self.n_alphas)
        else:
            grid = np.linspace(lo, alpha_max, self.n_alphas)
        if self.alpha is None:
            return grid
        alpha = float(self.alpha)
        if not self.warm_start_path:
            return np.array([alpha])
        return np.append(grid[grid < alpha], alpha)

    def _fit(self, X, y_idx):
        # small problems on one BLAS thread: no gain from threads there, and OpenBLAS's idle
        # threads spin on a loaded machine (a fit then takes many times longer)
        small = X.shape[0] <= _SINGLE_THREAD_ROWS
        with threadpool_limits(limits=1) if small else nullcontext():
            self._fit_body(X, y_idx)

    def _fit_body(self, X, y_idx):
        # C order: the same floating-point result for arrays, Fortran arrays and DataFrames
        X = np.ascontiguousarray(X, dtype=np.float64)
        n_classes = self.classes_.shape[0]
        algo = self._algo_kw()
        solve = self._solver_kw()

        Xs, self.mean_, self.scale_, usable = _standardize(X, self.standardize)
        Z = _k.optimal_scores(y_idx, n_classes)
        self.score_vectors_ = _k.score_vectors(np.bincount(y_idx, minlength=n_classes))
        w_one = usable.astype(np.float64)
        plain = self.alpha is not None and float(self.alpha) == 0.0

        sig_grid, ridge_grid, kernels = self._bandwidths_and_ridges(Xs, y_idx, usable, w_one)
        rows = self._sigma2_by_kos(Xs, y_idx, sig_grid, plain, algo)
        alpha_max, paths = self._lambda_paths(Xs, Z, sig_grid, ridge_grid, rows, usable, w_one,
                                              kernels, plain, solve)
        s_best, j_best = self._tune(Xs, y_idx, rows, paths, plain, algo)
        self.sigma2_ = float(sig_grid[s_best])
        self.ridge_ = float(ridge_grid[s_best])
        self.alpha_max_ = float(alpha_max[s_best])
        fit = self._final_fit(Xs, Z, paths[s_best][: j_best + 1], w_one, plain, algo, solve)
        weights, scores, fit = self._final_weights(X, Xs, Z, fit, usable, solve)
        support = weights != 0 if self.n_features_to_select_ is None else None
        self.weights_ = weights
        self._store_model(Xs, y_idx, fit, weights)
        self._set_selection(scores, support)

    def _bandwidths_and_ridges(self, Xs, y_idx, usable, w_one):
        """sigma2 candidates and gamma by Stabilization, on the full training data at w = 1."""
        quantiles = self._check_quantiles() if self.sigma2 is None else None
        if quantiles is not None and usable.any():
            sig_grid = _k.sigma2_candidates(Xs[:, usable], y_idx, quantiles, self.sigma2_rule)
        else:
            sig_grid = np.array([1.0 if self.sigma2 is None else float(self.sigma2)])
        n_sig = sig_grid.shape[0]
        kernels = {}
        ridge_grid = np.empty(n_sig)
        for s, sig in enumerate(sig_grid):
            if self.ridge is not None:
                ridge_grid[s] = float(self.ridge)
                continue
            K1 = _k.gaussian_kernel(Xs, sig, w_one)
            gamma, _ = _k.stabilization_ridge(_k.double_center(K1)[0])
            ridge_grid[s] = max(gamma, _MIN_RIDGE)
            if n_sig == 1:
                kernels[s] = K1  # reused for lambda_max
            del K1
        self.sigma2_grid_, self.ridge_grid_ = sig_grid, ridge_grid
        return sig_grid, ridge_grid, kernels

    def _sigma2_by_kos(self, Xs, y_idx, sig_grid, plain, algo) -> list[int]:
        """The sigma2 rows still in play: all, or the best by the CV error of KOS (w = 1)
        when asked (``sigma2_selection="kos"``) or for plain KOS."""
        self.sigma2_cv_errors_ = None
        n_sig = sig_grid.shape[0]
        if n_sig > 1 and (plain or self.sigma2_selection == "kos"):
            kos_err = self._cross_validate(
                Xs, y_idx, list(range(n_sig)), [np.array([0.0])] * n_sig, True, algo,
                desc="sigma2 by KOS CV",
            )
            self.sigma2_cv_errors_ = kos_err[:, 0]
            return [int(np.argmin(self.sigma2_cv_errors_))]
        return list(range(n_sig))

    def _lambda_paths(self, Xs, Z, sig_grid, ridge_grid, rows, usable, w_one, kernels, plain,
                      solve):
        """lambda_max (Lemma 1) at w = 1 and the lambda path of each sigma2 still in play."""
        n_sig = sig_grid.shape[0]
        alpha_max = np.full(n_sig, np.nan)
        paths = {}
        for s in rows:
            if plain:
                paths[s] = np.array([0.0])
                continue
            if self.alpha is not None and not self.warm_start_path:
                paths[s] = np.array([float(self.alpha)])
                continue
            st = _k.kos_state(Xs, Z, sig_grid[s], ridge_grid[s], w_one, K=kernels.get(s),
                              **solve)
            alpha_max[s] = _k.lambda_max(Xs, Z, sig_grid[s], ridge_grid[s], st) if (
                usable.any()) else 0.0
            paths[s] = self._alpha_path(alpha_max[s])
            del st
        kernels.clear()
        width = max(len(v) for v in paths.values())
        self.alpha_grid_ = np.full((n_sig, width), np.nan)
        for s, v in paths.items():
            self.alpha_grid_[s, : len(v)] = v
        return alpha_max, paths

    def _tune(self, Xs, y_idx, rows, paths, plain, algo) -> tuple[int, int]:
        """Cross-validation over the remaining (sigma2, lambda) pairs: the chosen row and the
        index on its path."""
        self.cv_errors_ = None
        tune_alpha = self.alpha is None
        s_best, j_best = rows[0], len(paths[rows[0]]) - 1
        if plain or not (tune_alpha or len(rows) > 1):
            return s_best, j_best
        n_sig, width = self.alpha_grid_.shape
        errors = np.full((n_sig, width), np.nan)
        sub = self._cross_validate(Xs, y_idx, rows, [paths[s] for s in rows], False, algo,
                                   desc="lambda paths CV")
        errors[rows] = sub
        self.cv_errors_ = errors
        ends = [len(paths[s]) - 1 for s in rows]
        # a given alpha is compared across sigma2 at its own path end
        view = sub if tune_alpha else sub[np.arange(len(rows)), ends][:, None]
        if self.sigma2_cv_errors_ is None:
            self.sigma2_cv_errors_ = np.full(n_sig, np.nan)
            self.sigma2_cv_errors_[rows] = view.min(axis=1)
        r, j = _select(view, self.alpha_ties)
        return rows[r], (j if tune_alpha else ends[r])

    def _final_fit(self, Xs, Z, path, w_one, plain, algo, solve):
        """The final fit, along the same warm path as the tuning (or its last lambda only)."""
        self.alpha_ = float(path[-1])
        if plain:
            st = _k.kos_state(Xs, Z, self.sigma2_, self.ridge_, w_one, **solve)
            fits = [_k.KOSFit.from_state(st, 0.0)]
            del st
        else:
            if not self.warm_start_path:
                path = path[-1:]
            fits = _k.sparse_kos_path(
                Xs, Z, self.sigma2_, self.ridge_, path, warm_start=self.warm_start_path, **algo
            )
        fit = fits[-1]
        self.path_weights_ = np.abs(np.vstack([f.weights for f in fits]))
        self.n_iter_ = max(1, int(fit.n_iter))
        self.objective_ = np.asarray(fit.objective)
        self.converged_ = bool(fit.converged)
        if not fit.converged:
            warnings.warn(
                f"SparseKOSClassifier stopped at max_iter={self.max_iter} outer iterations "
                f"(last objective change {abs(np.diff(self.objective_[-2:])).max():.1e} > "
                f"tol={self.tol}); increase max_iter.",
                ConvergenceWarning,
                stacklevel=5,
            )
        return fit

    def _final_weights(self, X, Xs, Z, fit, usable, solve):
        """|w| of the final fit with exact duplicate columns merged (the feature scores), and,
        for ``n_features_to_select``, only the top weights kept (each change refits A)."""
        weights = np.abs(fit.weights)
        first = duplicate_column_groups(X)
        if np.any(first != np.arange(first.size)):
            # exact copies: the kernel sees only the sum of their squared weights, and the l1
            # penalty is smallest with that sum on one copy (the method separates copies by
            # design); give it to the lowest index - the same kernel, a penalty not larger
            sq = np.bincount(first, weights=weights * weights, minlength=first.size)
            merged = np.where(first == np.arange(first.size), np.sqrt(sq), 0.0)
            if not np.array_equal(merged, weights):
                weights = merged
                st = _k.kos_state(Xs, Z, self.sigma2_, self.ridge_, weights, **solve)
                fit = _k.KOSFit.from_state(
                    st, self.alpha_, fit.objective, fit.n_iter, fit.converged
                )
        scores = np.where(usable, weights, _CONSTANT_SCORE)
        if self.n_features_to_select_ is not None:
            keep = _top(scores, self.n_features_to_select_)
            if np.any(weights[~keep] != 0):
                weights = np.where(keep, weights, 0.0)
                st = _k.kos_state(Xs, Z, self.sigma2_, self.ridge_, weights, **solve)
                fit = _k.KOSFit.from_state(
                    st, self.alpha_, fit.objective, fit.n_iter, fit.converged
                )
        return weights, scores, fit

    def _store_model(self, Xs, y_idx, fit, weights):
        active = np.flatnonzero(weights)
        self._active = active
        self._X_fit = Xs[:, active].copy()
        self._kernel_col_mean = fit.col_mean
        self.dual_coef_ = fit.dual_coef
        self._decider = _Decider(fit.fitted, y_idx, self.classes_.shape[0], self.rule,
                                 degenerate=active.size == 0)
        self.centroids_ = self._decider.centroids

    def _cross_validate(self, Xs, y_idx, sig_rows, paths, plain, algo,
                        desc="CV") -> np.ndarray:
        """CV misclassification rate of every (sigma2 row, path position); NaN-padded."""
        counts = np.bincount(y_idx)
        n_splits = min(self.cv, int(counts.max()))
        if n_splits < 2:
            raise ValueError(
                f"SparseKOSClassifier cannot cross-validate with cv={self.cv}: every class has "
                "a single sample. Pass sigma2, ridge and alpha."
            )
        # deterministic by default (scikit-learn's *CV convention): shuffled folds only with
        # a random_state
        shuffle = self.random_state is not None
        folds = StratifiedKFold(
            n_splits=n_splits, shuffle=shuffle,
            random_state=check_random_state(self.random_state) if shuffle else None,
        )
        width = max(len(v) for v in paths)
        wrong = np.zeros((len(paths), width))
        tasks = [(train, val, r) for train, val in folds.split(Xs, y_idx)
                 for r in range(len(paths))]

        bar = fit_progress(len(tasks), f"{type(self).__name__}: {desc}", self.verbose)
        lock = threading.Lock()
        n_outer = 0

        def run(task):
            nonlocal n_outer
            train, val, r = task
            errs, iters = self._fold_errors(Xs, y_idx, train, val, [sig_rows[r]], [paths[r]],
                                            plain, algo)
            with lock:  # the pool's threads report here one at a time
                n_outer += iters
                bar.set_postfix(outer_iterations=n_outer, refresh=False)
                bar.update(1)
            return errs[0]

        n_threads = _threads.resolve_n_jobs(self.n_jobs, n_tasks=len(tasks))
        results = [None] * len(tasks)

        def run_at(i):
            results[i] = run(tasks[i])

        try:
            if n_threads > 1:  # sparsefs's pool; each path on one BLAS thread
                with threadpool_limits(limits=1):
                    _threads.run_tasks(run_at, len(tasks), n_threads)
            else:
                results = [run(task) for task in tasks]
        finally:
            bar.close()
        for (_, _, r), errs in zip(tasks, results):
            wrong[r, : errs.shape[0]] += errs
        for r, v in enumerate(paths):
            wrong[r, len(v):] = np.nan
        return wrong / Xs.shape[0]

    def _fold_errors(self, Xs, y_idx, train, val, sig_rows, paths, plain, algo):
        """Validation misclassifications of every (path, position), and the number of outer
        iterations spent (for the progress bar)."""
        n_val = val.shape[0]
        wrong = np.full((len(paths), max(len(v) for v in paths)), float(n_val))
        iters = 0
        present, y_tr = np.unique(y_idx[train], return_inverse=True)
        if present.shape[0] < 2:
            return wrong, iters
        Xt, Xv = Xs[train], Xs[val]
        if self.standardize:
            Xt, mean, scale, usable = _standardize(Xt, True)
            Xv = (Xv - mean) / scale
            Xv[:, ~usable] = 0.0
        else:
            usable = np.ptp(Xt, axis=0) > 0
        y_val = y_idx[val]
        Zt = _k.optimal_scores(y_tr, present.shape[0])
        w_one = usable.astype(np.float64)
        solve = {k: algo[k] for k in ("eps", "form", "solver")}
        for r in range(len(paths)):
            sig, gamma = self.sigma2_grid_[sig_rows[r]], self.ridge_grid_[sig_rows[r]]
            st = _k.kos_state(Xt, Zt, sig, gamma, w_one, **solve)
            if plain:
                fits = [_k.KOSFit.from_state(st, 0.0)]
            else:
                fits = _k.sparse_kos_path(
                    Xt, Zt, sig, gamma, paths[r], state=st,
                    warm_start=self.warm_start_path, **algo,
                )
            del st
            iters += sum(int(fit.n_iter) for fit in fits)
            for j, fit in enumerate(fits):
                if not fit.weights.any():
                    continue  # w = 0 counts as all wrong
                Kv = _k.gaussian_kernel(Xv, sig, fit.weights, Y=Xt)
                P = _k.project(Kv, fit.col_mean, fit.dual_coef)
                decider = _Decider(fit.fitted, y_tr, present.shape[0], self.rule)
                pred = present[decider.predict_idx(P)]
                wrong[r, j] = np.count_nonzero(pred != y_val)
        return wrong, iters

    # ----------------------------------------------------------------------------------------
    # predict
    # ----------------------------------------------------------------------------------------

    def _standardized(self, X) -> np.ndarray:
        X = np.ascontiguousarray(self._validate(X, reset=False), dtype=np.float64)
        return (X - self.mean_) / self.scale_

    def project(self, X) -> np.ndarray:
        r"""The projections (6) onto the :math:`K-1` discriminants.

        :math:`P(x) = A^\top C(k_x - K1/n)`, with the weighted kernel of the training points.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes - 1)
        """
        check_is_fitted(self, "dual_coef_")
        Xs = self._standardized(X)
        if self._active.size == 0:
            return np.zeros((Xs.shape[0], self.dual_coef_.shape[1]))
        Kx = _k.gaussian_kernel(
            Xs[:, self._active], self.sigma2_, self.weights_[self._active], Y=self._X_fit
        )
        return _k.project(Kx, self._kernel_col_mean, self.dual_coef_)

    def _decision_function_in_memory(self, X) -> np.ndarray:
        """Signed class scores from the projections.

        Two classes (``rule="nearest"``): :math:`(P(x) - (\\mu_1 + \\mu_2)/2)\\,
        \\mathrm{sign}(\\mu_2 - \\mu_1)`, the projection shifted to the midpoint of the
        projected centroids and oriented so that a positive value means ``classes_[1]``.
        More classes: minus the squared Euclidean distance to each projected centroid. With
        ``rule="lda"``: the LDA discriminant functions (their difference for two classes). A
        model with :math:`w = 0` returns the log class proportions (predicts the majority).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        P = self.project(X)
        return self._decider.decision(P)

    def _predict_in_memory(self, X) -> np.ndarray:
        """Class of the nearest projected centroid (rule (7)); ties go to the lower class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        P = self.project(X)
        return self.classes_[self._decider.predict_idx(P)]


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------

#: fits with at most this many rows run on one BLAS thread (Cholesky at n = 1000: 9 ms on one
#: thread, 7-23 ms on two here; at n = 2400, 0.12 s against 0.084 s)
_SINGLE_THREAD_ROWS = 1500

#: floor on the Stabilization ridge (the clipped formula can give 0; (5) needs gamma > 0)
_MIN_RIDGE = 1e-8


def _standardize(X: np.ndarray, enabled: bool):
    """Column mean 0 and sd 1 (ddof=0), robust to 1e+-300; constant columns set to 0."""
    usable = np.ptp(X, axis=0) > 0
    if not enabled:
        mean, scale = np.zeros(X.shape[1]), np.ones(X.shape[1])
        return np.where(usable, X, 0.0), mean, scale, usable
    amax = np.where(usable, np.abs(X).max(axis=0), 1.0)
    Xa = X / amax
    m = Xa.mean(axis=0)
    sd = Xa.std(axis=0)
    usable &= sd > 0
    sd = np.where(usable, sd, 1.0)
    Xs = (Xa - m) / sd
    Xs[:, ~usable] = 0.0
    return Xs, m * amax, sd * amax, usable


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    order = np.argsort(-scores, kind="stable")
    keep = np.zeros(scores.shape[0], dtype=bool)
    keep[order[:k]] = True
    return keep


def _select(errors: np.ndarray, ties: str) -> tuple[int, int]:
    """The (sigma2, lambda) of smallest error: first sigma2, largest/smallest lambda on ties."""
    best = errors.min()
    s = int(np.flatnonzero((errors == best).any(axis=1))[0])
    js = np.flatnonzero(errors[s] == best)
    return s, int(js[-1] if ties == "largest" else js[0])


class _Decider:
    """Nearest projected centroid (7) or LDA on the projections; log priors when degenerate."""

    def __init__(self, fitted, y_idx, n_classes, rule, degenerate=False):
        counts = np.bincount(y_idx, minlength=n_classes).astype(np.float64)
        self.log_prior = np.log(counts / counts.sum())
        self.centroids = np.vstack(
            [fitted[y_idx == c].mean(axis=0) for c in range(n_classes)]
        )
        self.rule = rule
        self.degenerate = degenerate or not np.any(self.centroids != self.centroids[0])
        if rule == "lda" and not self.degenerate:
            resid = fitted - self.centroids[y_idx]
            dof = max(fitted.shape[0] - n_classes, 1)
            cov = resid.T @ resid / dof
            self.precision = np.linalg.pinv(cov)

    def scores(self, P):
        if self.degenerate:
            return np.broadcast_to(self.log_prior, (P.shape[0], self.log_prior.shape[0])).copy()
        if self.rule == "lda":
            W = self.centroids @ self.precision
            return P @ W.T - 0.5 * np.einsum("ij,ij->i", W, self.centroids) + self.log_prior
        d2 = ((P[:, None, :] - self.centroids[None, :, :]) ** 2).sum(axis=2)
        return -d2

    def decision(self, P):
        if self.centroids.shape[0] > 2:
            return self.scores(P)
        if self.rule == "nearest" and not self.degenerate:
            mu0, mu1 = self.centroids[0, 0], self.centroids[1, 0]
            return (P[:, 0] - 0.5 * (mu0 + mu1)) * np.sign(mu1 - mu0)
        s = self.scores(P)
        return s[:, 1] - s[:, 0]

    def predict_idx(self, P):
        if self.centroids.shape[0] == 2:
            return (self.decision(P) > 0).astype(np.intp)
        return np.argmax(self.scores(P), axis=1)
