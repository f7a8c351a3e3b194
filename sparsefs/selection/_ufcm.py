"""UFCM: unsupervised feature selection by class-margin optimisation (Wang et al., 2015)."""

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.utils import check_random_state

from sparsefs._kernels import ufcm as _kernel
from sparsefs._kernels.columns import TINY, tie_duplicate_scores
from sparsefs._kernels.graphs import degrees, knn_affinity, spectral_embedding
from sparsefs.base import BaseSelector
from sparsefs.exceptions import ConvergenceWarning
from sparsefs.utils._sklearn_compat import Interval, StrOptions

__all__ = ["UFCM"]

#: ``n_features_to_select=None`` keeps the features whose squared row norm of W exceeds this
#: multiple of the mean squared row norm ``d'/d`` (the "non-zero rows" of the paper).
NONZERO_ROW_REL = 1e-6

_SEED_MAX = np.iinfo(np.int32).max
#: the starts of init="best", in the order they run (ties go to the earlier one)
_STARTS = ("kmeans", "spectral", "screen")
#: neighbours of the kNN graph of ``init="spectral"`` (capped at n_samples - 1)
SPECTRAL_NEIGHBORS = 10
# init="best" keeps a later start only if its objective is higher by more than this (relative)
_BEST_RTOL = 1e-9
#: init="best": a later start is abandoned once even ``max(_ABANDON_FACTOR * t,
#: _ABANDON_MIN)`` more iterations at its largest recent gain could not lift its objective to
#: the best final objective so far (_abandon_rule). On 36 fits (12 data sets x 3 seeds) the
#: rule never dropped the start that ends highest (issue #33).
_ABANDON_FACTOR = 2
_ABANDON_MIN = 10


def _abandon_rule(best: float):
    """The rule that stops a later start of ``init="best"`` that cannot win: at iteration t,
    its objective plus ``max(2 t, 10)`` times its largest gain of the last two iterations is
    still below ``best``, the highest final objective of the earlier starts. The objective
    only grows, and its gains shrink as a start settles (a label change can still jump it:
    hence the generous horizon, which doubles with the iterations run)."""
    floor = best - _BEST_RTOL * abs(best)

    def abandon(t: int, history: np.ndarray, W, labels) -> bool:
        gains = np.diff(history[-3:])
        reach = history[-1] + max(_ABANDON_FACTOR * t, _ABANDON_MIN) * max(gains.max(), 0.0)
        return bool(reach < floor)

    return abandon


class UFCM(BaseSelector):
    r"""Unsupervised feature selection by class-margin optimisation (UFCM; Wang et al., 2015).

    Learns an orthonormal projection :math:`W \in \mathbb{R}^{d \times d'}` that maximises the
    total scatter of the projected data while k-means pseudo-labels :math:`U` pull every cluster
    together, with an :math:`\ell_{2,p}` row-sparsity penalty; features are ranked by the row
    norms of :math:`W`. With centred data (rows are samples) the objective is

    .. math::

        \max_{W^\top W = I,\ G,\ U}\ \operatorname{Tr}(W^\top S_t W)
        - \alpha\,\|X W - U G\|_F^2 - \beta \sum_{i=1}^d \|w^i\|_2^p,

    :math:`S_t = X^\top X` the total scatter, :math:`U` a hard cluster indicator and :math:`G`
    the centroids (with :math:`\alpha = 2` and true labels, the maximum margin criterion
    :math:`\operatorname{Tr}(W^\top (S_b - S_w) W)` plus the penalty). It is solved by
    alternating (i) the re-weighting :math:`d_{ii} = \tfrac p2 (\|w^i\|^2 + \varepsilon)^{(p-2)/2}`,
    (ii) the U-step, which keeps the best of the previous labels and ``n_restarts`` fresh k-means
    runs on :math:`XW` (the centroids are the cluster means in closed form), and (iii) the
    W-step: the top-:math:`d'` eigenvectors of
    :math:`A = S_t - \alpha S_w^{(U)} - \beta D`, found by Lanczos on a matrix-free operator
    (:math:`O(nd)` per product, the :math:`d \times d` matrix is never formed) warm-started at the
    previous :math:`W`. Each step cannot decrease the objective, so ``objective_`` is
    non-decreasing. The feature score is :math:`\|w^i\|_2` (invariant to rotations of
    :math:`W`'s columns, so to the choice of eigenvectors within degenerate eigenvalues).

    The paper's text available to us has no equations; they are reconstructed from its prose in
    ``specs/ufcm.md``, and the choices below are ours where the paper is silent.

    Parameters
    ----------
    n_clusters : int, default=8
        :math:`c`, the number of pseudo-classes of k-means (set it to the number of classes; the
        default is scikit-learn's ``KMeans`` default, only so the estimator can be built without
        arguments). Must not exceed ``n_samples``.
    n_components : int or None, default=None
        :math:`d'`, the dimension of the projection; ``None`` means ``max(n_clusters - 1, 1)``,
        the rank of the between-cluster scatter: for ``alpha >= 1`` the data part of the W-step
        matrix, :math:`(1-\alpha)S_t + \alpha S_b^{(U)}`, has at most :math:`c - 1` positive
        eigenvalues, and further directions are set by the penalty alone (at the first
        W-step, where :math:`D = I`, they are arbitrary within a degenerate eigenspace and can
        put one arbitrary feature first). Pass ``n_clusters`` for the spec's protocol setting
        :math:`d' = c`. Capped at the number of non-constant features.
    alpha : float >= 0, default=1.0
        Weight of the embedded k-means (within-cluster) term. ``alpha = beta = 0`` is PCA.
    beta : float >= 0, default=0.5
        Weight of the :math:`\ell_{2,p}` penalty, **relative to the data's scatter**: the fit
        uses :math:`\beta\,\sigma` with :math:`\sigma = \operatorname{Tr}(S_t)/d`, the mean
        per-feature scatter (:math:`= n` for standardised features; stored as ``beta_``). The
        data terms are quadratic in X, so X and cX give the same fit for every
        :math:`c \neq 0`, and the same ``beta`` means the same balance at any ``n_samples``.
        The default and ``p`` are chosen by the planted-feature designs of
        ``docs/methods/ufcm.md`` ("When to use it"): with a negligible penalty (the earlier
        absolute ``beta=1``) the alternation stops at the k-means labels of the raw data, a
        fixed point that noise dominates when d >> n.
    beta_scale : {"relative", "absolute"}, default="relative"
        ``"relative"``: ``beta`` is in units of the mean per-feature scatter (above).
        ``"absolute"``: ``beta`` is used as written, in the units of the data fitted (the
        z-scores with ``standardize=True``, else X's; the paper's grids, e.g. ``beta`` in
        10^-6..10^6, for reproductions); with ``standardize=False`` the fit then depends on
        the scale of X, as the paper's objective does.
    p : float in (0, 2], default=0.5
        Exponent of the :math:`\ell_{2,p}` penalty; the lower, the sparser the rows.
    n_restarts : int >= 0, default=10
        :math:`r`, the fresh k-means runs per U-step (the paper's :math:`r = 10`); also the number
        of k-means initialisations of the first labelling.
    n_features_to_select : int, float or None, default=None
        An int count, a float fraction in (0, 1], or ``None`` for the method's own rule: every
        feature whose row of :math:`W` is not negligible, i.e.
        :math:`\|w^i\|^2 > 10^{-6}\, d'/d` (``d'/d`` is the mean squared row norm). With a small
        ``beta`` no row vanishes and nearly every feature is kept; pass a count to get a
        ranking-based selection.
    max_iter : int >= 1, default=100
        Maximum number of outer iterations (re-weighting, U-step, W-step).
    tol : float >= 0, default=1e-4
        Stop when the relative change of the objective is at most ``tol``. With p = 0.5 the
        ascent has a slow tail (relative changes of 1e-4 to 2e-5 over tens of iterations at
        d = 10^4); 1e-4 gave the same selection as 1e-5 on the issue #16 designs in half the
        iterations (47 against 100 = max_iter, 27 against 51).
    standardize : bool, default=True
        z-score every feature before the fit (centre, divide by the standard deviation), so
        the selection does not depend on the features' units (the spec's recommendation,
        ``specs/ufcm.md`` B.8). UFCM's data terms are scatters, so on the raw scale a
        feature's score grows with its variance and a low-variance feature cannot outrank
        unit-variance noise: on the embedded default with N(0, 1) noise the fit keeps 12/13
        wine features standardised and 9/13 raw (``docs/methods/ufcm.md``). ``False`` centres
        X only (the paper assumes centred data; whether it scaled is not known): use it when
        a feature's variance is itself the signal and the units are shared. ``beta`` is
        relative to the scatter either way; ``objective_`` is in the units of the data
        fitted (the z-scores by default).
    init : {"best", "kmeans", "spectral", "screen"}, default="best"
        The initial pseudo-labels. ``"kmeans"``: k-means on the data (the paper's "U is
        initialized by K-means"). ``"spectral"``: spectral clustering of the samples' kNN graph
        (``SPECTRAL_NEIGHBORS`` = 10 neighbours, binary weights). ``"screen"``: k-means on the
        features that move with others - those whose sum of squared correlations with all
        features stands out (3 robust standard deviations above the median; at least
        ``2 * n_clusters``, at most 1000), in unit norm
        (``sparsefs._kernels.ufcm.screened_columns``); scale-free. ``"best"``: all three,
        keeping the fit with the highest final objective (three times the cost; the k-means
        fit comes first and is ``init="kmeans"``'s own, so ``"best"`` never ends below it).
        The alternation is a local ascent from these labels: when d >> n, k-means on all
        features returns labels that noise fits as well as any, a fixed point the alternation
        cannot leave. On the issue #16 planted design at 120 x 3000 (standardised) the k-means
        start ends at objective -378.7 with 1/40 planted features, the screen start at 433.7
        with 40/40 (as from the true clusters); on the embedded default, seeds 0-4, the
        k-means start alone ends at objectives 213.7, 82.0, 83.8, -69.4, 264.1 with 12, 11,
        10, 0, 11 of 13 wine features, ``"best"`` at 264.3 with 11/13 for every seed
        (``docs/methods/ufcm.md``).
    eigen_solver : {"auto", "arpack", "dense"}, default="auto"
        The W-step's eigensolver. ``"arpack"``: implicitly restarted Lanczos
        (``scipy.sparse.linalg.eigsh``) on a matrix-free operator, :math:`O(nd)` per product -
        for wide data (``n < d``) the shift-inverted :math:`(\sigma I - A)^{-1}` applied by
        Woodbury's identity, which converges in tens of products where Lanczos on :math:`A`
        needs thousands once the penalty has driven rows to zero; ``"dense"``: LAPACK ``eigh``
        on the formed :math:`d \times d` matrix (:math:`O(d^3)`, the test reference);
        ``"auto"``: dense up to 500 non-constant features (or up to 2000 when
        ``n_samples >= n_features``), Lanczos above. ARPACK needs :math:`d' < d - 1`;
        otherwise the dense solver is used.
    random_state : int, RandomState instance or None, default=None
        Seeds one numpy generator that draws the Lanczos start vector and the k-means
        seedings of the k-means start, and two more seeds, for the spectral and the screen
        start's own generators: a start follows the same path alone (``init="spectral"``)
        and within ``init="best"``. Two fits with the same int agree exactly.

    Attributes
    ----------
    components_ : ndarray of shape (n_features_in_, n_components_)
        :math:`W`, with orthonormal columns ordered by decreasing eigenvalue of the last
        W-step's matrix; rows of constant features are zero.
    scores_ : ndarray of shape (n_features_in_,)
        :math:`\|w^i\|_2`, the row norms of ``components_`` (higher = better).
    ranking_ : ndarray of shape (n_features_in_,)
        1 = best; ties broken by the lower feature index.
    support_ : ndarray of shape (n_features_in_,), dtype bool
        The selected features.
    labels_ : ndarray of shape (n_samples,)
        The final pseudo-labels :math:`U`.
    objective_ : ndarray of shape (n_iter_ + 1,)
        The objective after the initialisation and after each iteration, in the units of the
        input; non-decreasing. The penalty in it is the smoothed one,
        :math:`\sum_i(\|w^i\|^2 + \varepsilon)^{p/2}` with
        :math:`\varepsilon = 10^{-8} d'/d`, which differs from :math:`\sum_i \|w^i\|^p` by less
        than :math:`d\,\varepsilon^{p/2}`.
    n_iter_ : int
        Outer iterations run.
    converged_ : bool
        Whether the stopping rule was met before ``max_iter`` (else a ``ConvergenceWarning``).
    n_components_ : int
        The :math:`d'` used.
    init_ : str
        The start whose fit was kept (``"kmeans"``, ``"spectral"`` or ``"screen"``).
    beta_ : float
        The absolute penalty weight used, :math:`\beta\,\sigma` in the units of the input
        (``inf`` or 0 only for data near 1e+-300, where the fit itself runs rescaled).
    n_features_to_select_ : int
        How many features were selected.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X is a DataFrame with string column names.

    Notes
    -----
    Interpretations where the paper is silent (all documented in ``docs/methods/ufcm.md``):

    * **Centring, scaling.** X is centred internally (the paper assumes centred data) and, by
      default, standardised (``standardize``); scatter matrices are sums over samples, not
      means; ``beta`` is relative to the mean per-feature scatter (:math:`n` after
      standardising).
    * **Initialisation.** :math:`U` from k-means on the centred data (best of ``n_restarts``,
      at least 1; run on the samples' coordinates in their own span, which have the same
      distances), :math:`D = I`, then :math:`W` from the W-step. By default (``init``) two
      more fits start from spectral clustering and from k-means on the correlation-screened
      features, and the highest final objective is kept.
    * **Projection dimension.** :math:`d' = c - 1` by default (see ``n_components``); the
      paper's value is not available, the spec's protocol suggests :math:`c`.
    * **U-step candidates.** The previous labels, their k-means refinement (Lloyd warm-started at
      their centroids on the new :math:`XW`), and ``n_restarts`` fresh k-means++ runs; the
      lowest k-means cost wins, the previous labels on ties. Reading the paper's "randomly
      initialize U r times" as k-means restarts is ours. k-means is a seeded numpy Lloyd's
      algorithm (``sparsefs._kernels.ufcm.kmeans``) sized for the ``n x d'`` projection, so
      the U-step costs :math:`O(r\,n\,c\,d')` per iteration, not a fixed overhead per run.
    * **Duplicate columns.** Exact copies of a column get exactly equal scores (the mean of
      their row norms, which differ only by rounding).
    * **Smoothing.** :math:`\varepsilon = 10^{-8}\,d'/d`, fixed over the iterations.
    * **Stopping.** :math:`|J_t - J_{t-1}| \le \mathrm{tol}\,|J_{t-1}|` or ``max_iter``.
    * **Constant features** take no part in the eigenproblem (their rows of :math:`W` are 0, so
      they score 0 and rank last): in the model they only add penalty, but an orthonormal
      :math:`W` could otherwise park a spare direction on them.
    * **Extreme scales.** Data beyond 1e±100 are rescaled by a power of two before anything
      is squared (the objective is homogeneous and ``beta`` relative), so no scatter
      overflows and X, 1e-300·X and 1e300·X select the same features.
    * **Empty clusters** (only with tied points) are dropped from a candidate's indicator.
    * **Sparse X** (CSR/CSC, ``{array-like, sparse matrix}``) is never densified: the centred
      (and, on request, standardised) data are kept as the sparse matrix and its column means
      (``sparsefs._kernels.centered.CenteredSparse``), so every product of the W-step and of
      k-means is a sparse product plus a rank-one correction and only ``n x n`` Grams (wide
      data) or ``d x d`` ones (the dense solver, small d) are formed; float32 input is fitted
      in float64, as on dense input. The fit equals that of the dense copy up to rounding.

    References
    ----------
    .. [1] S. Wang, F. Nie, X. Chang, L. Yao, X. Li and Q. Z. Sheng, "Unsupervised feature
       analysis with class margin optimization", ECML-PKDD 2015, LNCS 9284, pp. 383-398;
       arXiv:1506.01330.
    .. [2] F. Nie, H. Huang, X. Cai and C. Ding, "Efficient and robust feature selection via
       joint l2,1-norms minimization", NIPS 2010.
    .. [3] H. Li, T. Jiang and K. Zhang, "Efficient and robust feature extraction by maximum
       margin criterion", NIPS 2003.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import UFCM
    >>> data = make_planted_classification(n_samples=90, n_features=300, random_state=0)
    >>> ufcm = UFCM(n_clusters=3, n_features_to_select=20, random_state=0).fit(data.X)
    >>> ufcm.components_.shape  # d x d', d' = n_clusters - 1 by default
    (300, 2)
    >>> int((ufcm.support_ & data.support).sum())  # the labels were not used
    20
    >>> bool((ufcm.objective_[1:] >= ufcm.objective_[:-1]).all())
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "beta": [Interval(Real, 0, None, closed="left")],
        "beta_scale": [StrOptions({"relative", "absolute"})],
        "p": [Interval(Real, 0, 2, closed="right")],
        "n_restarts": [Interval(Integral, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "standardize": ["boolean"],
        "init": [StrOptions({"kmeans", "spectral", "screen", "best"})],
        "eigen_solver": [StrOptions({"auto", "arpack", "dense"})],
        "random_state": ["random_state"],
    }
    _supervised = False
    # sparse X: the centred data as an implicit operator (never densified; _kernels.ufcm)
    _accept_sparse = ("csr", "csc")

    def __init__(
        self,
        n_clusters=8,
        *,
        n_components=None,
        alpha=1.0,
        beta=0.5,
        beta_scale="relative",
        p=0.5,
        n_restarts=10,
        n_features_to_select=None,
        max_iter=100,
        tol=1e-4,
        standardize=True,
        init="best",
        eigen_solver="auto",
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.alpha = alpha
        self.beta = beta
        self.beta_scale = beta_scale
        self.p = p
        self.n_restarts = n_restarts
        self.n_features_to_select = n_features_to_select
        self.max_iter = max_iter
        self.tol = tol
        self.standardize = standardize
        self.init = init
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    def _fit(self, X, y_idx):
        n_samples, n_features = X.shape
        if n_samples < 2:
            raise ValueError(
                f"UFCM needs at least 2 samples to learn a projection; got n_samples={n_samples}."
            )
        if self.n_clusters > n_samples:
            raise ValueError(
                f"n_clusters={self.n_clusters} exceeds n_samples={n_samples}; UFCM needs at "
                "least as many samples as pseudo-classes."
            )
        if self.n_components is not None and self.n_components > n_features:
            raise ValueError(
                f"n_components={self.n_components} exceeds n_features={n_features}; pass at "
                f"most {n_features} or None."
            )
        rng = check_random_state(self.random_state)
        gen = np.random.default_rng(rng.randint(_SEED_MAX))
        # the spectral and screen starts draw from their own generators (seeded after gen's
        # seed, so gen's stream, which the k-means start uses, is what it always was): a
        # start follows the same path alone (init="spectral") and within init="best", and
        # abandoning one start changes no other start's draws
        side_seeds = dict(zip(_STARTS[1:], rng.randint(_SEED_MAX, size=len(_STARTS) - 1),
                              strict=True))
        Xc, exponent, varying = _kernel.prepare_data(X, standardize=self.standardize)
        if not varying.all():
            Xc = Xc[:, varying]
        n_varying = Xc.shape[1]
        requested = self.n_components
        if requested is None:
            requested = max(self.n_clusters - 1, 1)
        self.n_components_ = n_comp = min(requested, n_varying)

        W = np.zeros((n_features, n_comp))
        if n_comp == 0:  # every feature is constant: nothing to project, nothing to cluster
            self.labels_ = np.zeros(n_samples, dtype=np.intp)
            self.beta_ = 0.0
            self.init_ = "kmeans" if self.init == "best" else self.init
            self.objective_, self.n_iter_, self.converged_ = np.zeros(1), 0, True
        else:
            # samples' coordinates in their own span (n columns, the same distances)
            coords = _kernel.isometric_coordinates(Xc)
            # beta is relative to the mean per-feature scatter: the fit is the same for X and cX
            if self.beta_scale == "relative":
                self.beta_ = float(self.beta) * _kernel.data_scale(Xc)
            else:  # in the units of X: those of Xc = (X - mean) / 2**exponent are 4**-exponent
                self.beta_ = float(np.ldexp(float(self.beta), -2 * exponent))
            v0 = gen.standard_normal(n_varying)
            starts = _STARTS if self.init == "best" else (self.init,)
            result = None
            for start in starts:
                sgen = gen if start == "kmeans" else np.random.default_rng(side_seeds[start])
                if start == "kmeans":  # the paper's start: k-means on the data
                    labels = _kernel.kmeans(coords, self.n_clusters, sgen,
                                            n_init=max(1, self.n_restarts))
                elif start == "spectral":
                    # distances ignore the centring: sparse X's kNN graph reads X itself
                    points = Xc.csr if isinstance(Xc, _kernel.CenteredSparse) else None
                    labels = self._spectral_labels(coords, sgen, points)
                else:  # k-means on the features that move with others, in unit norm
                    labels = _kernel.kmeans(_kernel.screened_columns(Xc, self.n_clusters),
                                            self.n_clusters, sgen,
                                            n_init=max(1, self.n_restarts))
                fit = _kernel.ufcm(
                    Xc,
                    labels,
                    n_components=n_comp,
                    alpha=float(self.alpha),
                    beta=self.beta_,
                    p=float(self.p),
                    propose=lambda Y, prev, g=sgen: self._candidates(Y, prev, g),
                    v0=v0,
                    max_iter=self.max_iter,
                    tol=self.tol,
                    solver=self.eigen_solver,
                    factor=coords if coords is not Xc else None,
                    abandon=None if result is None else _abandon_rule(result.objective[-1]),
                )
                # several starts: keep the highest objective; the first on ties, also to
                # rounding (two starts often end at the same partition, labels permuted)
                if not fit.abandoned and (result is None or fit.objective[-1] > (
                    result.objective[-1] + _BEST_RTOL * abs(result.objective[-1]))):
                    result, self.init_ = fit, start
            W[varying] = result.components
            self.labels_ = result.labels
            with np.errstate(over="ignore", under="ignore"):  # +-inf / 0 only near 1e+-300
                self.objective_ = np.ldexp(result.objective, 2 * exponent)
                self.beta_ = float(np.ldexp(self.beta_, 2 * exponent))
            self.n_iter_ = result.n_iter
            self.converged_ = result.converged
            if not result.converged:
                change = abs(result.objective[-1] - result.objective[-2]) / max(
                    abs(result.objective[-2]), TINY
                )
                warnings.warn(
                    f"UFCM stopped at max_iter={self.max_iter} (relative change of the "
                    f"objective {change:.1e} > tol={self.tol}).",
                    ConvergenceWarning,
                    stacklevel=3,
                )
        self.components_ = W
        # exact copies of a column get exactly equal scores (rounding removed)
        scores = tie_duplicate_scores(X, np.sqrt(np.einsum("ij,ij->i", W, W)))
        support = None
        if self.n_features_to_select_ is None:
            support = scores**2 > NONZERO_ROW_REL * n_comp / n_features
        self._set_selection(scores, support)

    # ----------------------------------------------------------------------------- k-means

    def _spectral_labels(self, coords, gen, points=None):
        """Spectral clustering of the samples: k-means on the normalised-Laplacian embedding.

        The binary kNN graph (``SPECTRAL_NEIGHBORS`` neighbours, symmetrised) of the samples,
        the ``n_clusters - 1`` leading non-trivial eigenvectors :math:`z` of
        :math:`D^{-1/2}WD^{-1/2}` scaled to :math:`D^{-1/2}z` (Shi & Malik's generalised
        eigenvectors), then k-means on them (Ng, Jordan & Weiss, 2001; von Luxburg, 2007).
        ``points``: other rows with the distances of ``coords`` for the kNN search (sparse X:
        the uncentred sparse data, cheaper than the dense ``n x n`` coordinates).
        """
        n = coords.shape[0]
        n_emb = min(max(self.n_clusters - 1, 1), n - 2)
        if self.n_clusters == 1 or n_emb < 1:
            return np.zeros(n, dtype=np.intp)
        graph = knn_affinity(
            coords if points is None else points, min(SPECTRAL_NEIGHBORS, n - 1),
            weight="binary",
        )
        _, Z = spectral_embedding(graph.W, n_emb)
        deg = degrees(graph.W)
        Y = Z / np.sqrt(np.where(deg > 0, deg, 1.0))[:, None]
        return _kernel.kmeans(Y, self.n_clusters, gen, n_init=max(1, self.n_restarts))

    def _candidates(self, Y, previous, gen):
        """The U-step candidates besides ``previous``: its refinement, then the fresh runs."""
        out = []
        centers, counts = _kernel.cluster_means(Y, previous, self.n_clusters)
        if np.all(counts > 0):
            out.append(_kernel.kmeans(Y, self.n_clusters, gen, init=centers))
        out.extend(_kernel.kmeans(Y, self.n_clusters, gen) for _ in range(self.n_restarts))
        return out
