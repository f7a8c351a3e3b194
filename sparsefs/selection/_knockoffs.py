"""Model-X knockoff filter for p >> n: low-rank Gaussian knockoffs, knockoff+ and e-values."""

import dataclasses
import math
import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import lasso_path
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils import check_random_state

from sparsefs._kernels import knockoffs as _kernel
from sparsefs._kernels.columns import duplicate_column_groups
from sparsefs.base import BaseSelector
from sparsefs.exceptions import KnockoffModelWarning
from sparsefs.selection._error_control import base_estimator, fitted_scores
from sparsefs.utils._sklearn_compat import Interval, StrOptions
from sparsefs.utils._threads import one_blas_thread

__all__ = ["KnockoffSelector"]

#: the penalty grid of the cross-validated lasso: ``N_ALPHAS`` values from lambda_max down
#: to ``ALPHA_EPS * lambda_max``, geometric
N_ALPHAS = 10
ALPHA_EPS = 0.05

#: the model check (``covariance="auto"`` and the warning): rows needed to split, the
#: z-score from which a held-out residual counts as real, the share of the held-out residual
#: of the spiked model that the Ledoit-Wolf model must remove to replace it, and the share of
#: the features' correlation energy missed from which the fit warns
CHECK_MIN_ROWS = 20
CHECK_Z = 3.0
CHECK_SWITCH = 0.75
CHECK_WARN_FRACTION = 0.25
#: the share of the correlation energy the knockoffs may miss on held-out rows: above it,
#: ``s`` is scaled by ``sqrt(CHECK_TOLERATED / fraction)`` (the residual is proportional
#: to s^2), never below ``CHECK_MIN_S_SCALE`` of the model's ``s``
CHECK_TOLERATED = 0.1
CHECK_MIN_S_SCALE = 0.2


def _response(y_idx: np.ndarray) -> np.ndarray:
    """Centred class indicator(s): one column for two classes, one-hot otherwise."""
    n_classes = int(y_idx.max()) + 1
    Y = np.zeros((y_idx.shape[0], n_classes))
    Y[np.arange(y_idx.shape[0]), y_idx] = 1.0
    Y = Y[:, 1:] if n_classes == 2 else Y
    return Y - Y.mean(axis=0)


def _coef_norms(coefs: np.ndarray) -> np.ndarray:
    """``|beta_j|`` per penalty: coefs (p, n_alphas) or (n_targets, p, n_alphas)."""
    return np.abs(coefs) if coefs.ndim == 2 else np.sqrt(np.sum(coefs**2, axis=0))


def lasso_coef_magnitudes(A: np.ndarray, y_idx: np.ndarray, alpha: float | None, cv: int,
                          seed: int, continuous: bool = False) -> tuple[np.ndarray, float]:
    r""":math:`|\hat\beta_j(\lambda)|` of the least-squares lasso of the centred class
    indicators (or of a continuous target, ``continuous=True``) on the columns of ``A``
    (group lasso over the classes for more than two), at ``alpha`` or at the penalty of
    least ``cv``-fold CV error (stratified by class) on a geometric grid of
    :data:`N_ALPHAS` penalties from :math:`\lambda_{max}` down.
    """
    A = A - A.mean(axis=0)
    Y = (y_idx - y_idx.mean())[:, None] if continuous else _response(y_idx)
    y = Y[:, 0] if Y.shape[1] == 1 else Y
    n = A.shape[0]
    if alpha is not None:
        _, coefs, _ = lasso_path(A, y, alphas=[float(alpha)], max_iter=2000, tol=1e-4)
        return _coef_norms(coefs)[:, 0], float(alpha)
    lam_max = float(np.max(np.sqrt(np.sum((A.T @ Y) ** 2, axis=1)))) / n
    if lam_max == 0:
        return np.zeros(A.shape[1]), 0.0
    alphas = lam_max * np.geomspace(1.0, ALPHA_EPS, N_ALPHAS)
    if continuous:
        n_splits = int(min(cv, n))
        folds = KFold(n_splits=n_splits, shuffle=True, random_state=seed) if n_splits >= 2 \
            else None
    else:
        n_splits = int(min(cv, np.bincount(y_idx).min()))
        folds = (StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
                 if n_splits >= 2 else None)
    errors = np.zeros(N_ALPHAS)
    if folds is not None:
        for train, test in folds.split(A, None if continuous else y_idx):
            At, Yt = A[train], Y[train]
            mean_a, mean_y = At.mean(axis=0), Yt.mean(axis=0)
            yt = (Yt - mean_y)[:, 0] if Y.shape[1] == 1 else Yt - mean_y
            _, coefs, _ = lasso_path(At - mean_a, yt, alphas=alphas, max_iter=2000, tol=1e-4)
            coefs = coefs[None] if coefs.ndim == 2 else coefs  # (targets, p, alphas)
            pred = np.einsum("ij,kja->ika", A[test] - mean_a, coefs) + mean_y[None, :, None]
            errors += np.sum((Y[test][:, :, None] - pred) ** 2, axis=(0, 1))
    best = int(np.argmin(errors)) if n_splits >= 2 else N_ALPHAS - 1
    _, coefs, _ = lasso_path(A, y, alphas=alphas[: best + 1], max_iter=2000, tol=1e-4)
    return _coef_norms(coefs)[:, -1], float(alphas[best])


class KnockoffSelector(BaseSelector):
    r"""The model-X knockoff filter: features selected with false discovery rate at most ``fdr``.

    For each feature :math:`X_j` a *knockoff* :math:`\tilde X_j` is drawn that mimics the
    correlation structure of the features but, by construction, carries no information about
    the classes beyond :math:`X` (Candès, Fan, Janson & Lv 2018). A statistic compares each
    feature with its knockoff,

    * ``"lasso_coef_diff"``: :math:`W_j = |\hat\beta_j| - |\hat\beta_{j+p}|` from one lasso of
      the centred class indicators - or of a continuous target, the knockoffs' native setting
      (``docs/outcomes.md``) - on :math:`[X, \tilde X]` (a group lasso over the classes
      when there are more than two), the penalty chosen by ``cv``-fold cross-validation
      (stratified by class; or ``alpha``);
    * ``"score_diff"``: :math:`W_j = s_j - s_{j+p}` for the ``scores_`` of any sparsefs
      estimator fitted on :math:`[X, \tilde X]` (e.g. the Fisher scores, the sparse-center
      gains; for a survival target a Cox estimator: the Cox score tests of
      :class:`~sparsefs.selection.UnivariateScore` or the Cox lasso of
      :class:`~sparsefs.selection.LassoSelector`),

    so that a null feature's :math:`W_j` is as likely positive as negative. Each feature and
    its knockoff are swapped at random before the statistic is computed and swapped back after,
    which makes the sign symmetry exact whatever the order in which a solver visits the columns.
    The knockoff+ threshold

    .. math::

        T = \min\left\{t > 0 : \frac{\mathrm{offset} + \#\{j : W_j \le -t\}}
        {\max(1, \#\{j : W_j \ge t\})} \le q\right\}

    keeps :math:`\{j : W_j \ge T\}`, with FDR :math:`\le q` for ``offset=1`` (knockoff+; the
    modified FDR for ``offset=0``). When no :math:`t` qualifies, :math:`T = +\infty` and
    **nothing** is selected. Knockoff+ cannot select anything unless at least
    :math:`\lceil 1/q \rceil` statistics are positive: a warning says so.

    Knockoffs (p >> n, no semidefinite program). Columns are standardised and their
    correlation is estimated as :math:`\hat\Sigma = \sigma^2 I + U \Lambda U^\top`, a scalar
    identity plus a rank-:math:`r \le n` term, either by

    * ``covariance="spiked"``: a factor (spiked) model. Sample eigenvalues above the
      Marchenko-Pastur edge :math:`\sigma^2(1 + \sqrt{p/n})^2` are de-biased to their
      population spikes and shrunk for the error of their eigenvectors (Donoho, Gavish &
      Johnstone 2018); the rest is noise :math:`\sigma^2`. With independent features this is
      :math:`\sigma^2 I`;
    * ``"ledoit_wolf"`` (or a float :math:`\delta`): linear shrinkage
      :math:`(1-\delta)S + \delta I`. When p >> n it keeps much of the inflated sample
      eigenvalues, so the knockoffs copy the observed rows (in-sample correlation of a feature
      with its knockoff far above the intended :math:`1 - s`) and the filter loses power.

    or ``covariance="auto"`` (default), which chooses between the two by a **model check**:
    valid knockoffs satisfy :math:`\mathrm{Cov}(\tilde z_j, z_k) = \mathrm{Cov}(z_j, z_k)` for
    :math:`j \ne k`, and a model that misses part of the correlation (a low-rank model of
    banded or AR(1) correlation) breaks it, so that a null feature correlated with a true one
    beats its knockoff more often than not and the FDR exceeds q. Each candidate is fitted on
    a random half of the rows and its knockoffs drawn for the other half, where
    :math:`\frac1p\sum_{j \ne k}\mathrm{Cov}(z_j - \tilde z_j, z_k)^2` is estimated without
    bias beside the features' own correlation energy
    :math:`\frac1p\sum_{j \ne k}\mathrm{Cov}(z_j, z_k)^2`
    (:func:`sparsefs._kernels.knockoffs.knockoff_residual`; ``model_check_``). The spiked
    model is kept unless its residual is significant (z > 3) and the Ledoit-Wolf model's is
    below 3/4 of it. When the chosen model still misses more than 10% of the correlation
    energy, :math:`s` is scaled by :math:`\sqrt{0.1/\text{missed}}` (at least 0.2; the
    residual scales with :math:`s^2`: knockoffs closer to their features miss less, and find
    less), and above 25% a :class:`~sparsefs.exceptions.KnockoffModelWarning` says that the
    FDR may exceed q. A known correlation (or covariance) matrix may be passed instead
    (``covariance=Sigma``): exact knockoffs, the model-X setting proper.

    Equicorrelated Gaussian knockoffs (:math:`s = \min(2\lambda_{\min}(\hat\Sigma), 1)`) are
    then drawn with the Woodbury identity in O(n p r) time and memory, never forming a p x p
    matrix (``sparsefs._kernels.knockoffs``).

    Derandomised knockoffs (``n_draws > 1``, Ren & Barber 2024): each draw :math:`m` runs
    knockoff+ at level ``fdr_per_draw`` (default :math:`q/2`) and gives e-values
    :math:`e^{(m)}_j = p\,1\{W^{(m)}_j \ge T^{(m)}\}/(1 + \#\{k : W^{(m)}_k \le -T^{(m)}\})`;
    their average goes through e-BH at level :math:`q`, so that the selection hardly depends
    on the random draw (FDR :math:`\le q` still).

    Parameters
    ----------
    estimator : estimator, str or None, default=None
        The importance of ``statistic="score_diff"`` (a sparsefs estimator with ``scores_`` or
        a registry stem); ``None`` there means :class:`~sparsefs.selection.FisherScore`.
    fdr : float in (0, 1), default=0.1
        The target false discovery rate :math:`q`.
    statistic : {"auto", "lasso_coef_diff", "score_diff"}, default="auto"
        ``"auto"``: ``"score_diff"`` for class labels (with ``estimator=None``: the Fisher
        score difference, chosen on evidence: more power than the lasso statistic at n << p
        and at n = 200, p = 500, see ``docs/methods/knockoffs.md``) and whenever
        ``estimator`` is given; ``"lasso_coef_diff"`` for a continuous target without
        ``estimator``.
    offset : {0, 1}, default=1
        1: knockoff+ (FDR control); 0: knockoff (modified FDR). Derandomisation needs 1.
    n_draws : int, default=1
        Knockoff draws; more than one aggregates them by e-values.
    fdr_per_draw : float in (0, 1) or None, default=None
        :math:`q_{kn}` of each draw when ``n_draws > 1``; ``None``: ``fdr / 2``.
    covariance : {"auto", "spiked", "ledoit_wolf"}, float or array-like, default="auto"
        The correlation estimate the knockoffs are drawn from (see above): chosen by the
        model check, the de-biased spiked factor model, Ledoit-Wolf linear shrinkage, linear
        shrinkage with this :math:`\delta` in (0, 1], or the known correlation / covariance
        matrix of the features, shape (n_features, n_features) (exact knockoffs). Every
        fitted model is checked on held-out rows
        (``model_check_``; the scaling of :math:`s` and the warning apply to all).
    alpha : float or None, default=None
        The lasso penalty of ``"lasso_coef_diff"`` (on standardised columns); ``None``:
        cross-validated on a grid of 10 penalties.
    cv : int, default=5
        Folds of that cross-validation.
    n_features_to_select : int, float or None, default=None
        ``None``: the knockoff filter's selection. An int or fraction keeps that many features
        with the largest statistic (or averaged e-value) instead (no FDR guarantee).
    random_state : int, RandomState instance or None, default=None
        Seeds the knockoff draws, the swaps and the cross-validation folds.
    target_type : {"auto", "classification", "regression"}, default="auto"
        How a non-structured ``y`` is read (``"regression"``: integer values are numbers;
        passed on to ``estimator``).

    Attributes
    ----------
    statistics_ : ndarray of shape (n_draws, n_features_in_)
        :math:`W^{(m)}_j`.
    thresholds_ : ndarray of shape (n_draws,)
        :math:`T^{(m)}` (``inf``: that draw selects nothing).
    threshold_ : float
        :math:`T` (one draw) or the smallest selected averaged e-value (``inf`` if none).
    evalues_ : ndarray of shape (n_features_in_,) or None
        The averaged e-values (``n_draws > 1``).
    noise_variance_ : float
        :math:`\sigma^2` (``"spiked"``) or :math:`\delta` (linear shrinkage): the eigenvalue of
        :math:`\hat\Sigma` off its low-rank part.
    n_components_ : int
        Rank :math:`r` of the low-rank part of :math:`\hat\Sigma`.
    knockoff_s_ : float
        :math:`s` (after ``s_scale_``); the correlation of a feature with its knockoff is
        :math:`1 - s`.
    covariance_ : str
        The model used: ``"spiked"``, ``"ledoit_wolf"``, ``"shrinkage"`` (a float
        ``covariance``) or ``"given"`` (a matrix); None when no column varies.
    model_check_ : dict of str to sparsefs._kernels.knockoffs.ResidualCheck
        The held-out model check of every candidate model (``excess``, ``energy``,
        ``fraction``: the share of the correlation energy the knockoffs miss, ``z``); empty
        with fewer than 20 rows.
    s_scale_ : float
        The factor applied to the model's :math:`s` (1: none).
    lasso_alphas_ : ndarray of shape (n_draws,) or None
        The penalties used by ``"lasso_coef_diff"``.
    scores_ : ndarray of shape (n_features_in_,)
        :math:`W_j` (one draw) or the averaged e-values.
    ranking_ : ndarray of shape (n_features_in_,)
    support_ : ndarray of bool, shape (n_features_in_,)
    n_features_to_select_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X is a DataFrame with string column names.

    See Also
    --------
    sparsefs.selection.ErrorControlSelector : p-values and BH / BY / Holm / Bonferroni.

    Notes
    -----
    Dense X only: the standardised columns and their Gaussian knockoffs are dense n x p
    arrays whatever the sparsity of X (O(n p) memory, as the construction).

    The FDR guarantee is *model-X*: it holds when the knockoffs are exchangeable with the
    features, i.e. when the rows are Gaussian with the estimated correlation. With
    :math:`\hat\Sigma` estimated from the same n << p samples this is an approximation, robust
    in the simulations of Barber, Candès & Samworth (Ann. Statist. 48, 2020); no assumption is
    made about how the classes depend on the features.

    Exact copies of a column are one hypothesis: the knockoffs and the filter see each group of
    identical columns once (a copy would make the correlation singular and its knockoff
    statistic noise), and every copy shares its original's statistic, score and selection.
    The FDR statement is then over the distinct columns.

    References
    ----------
    .. [1] E. Candès, Y. Fan, L. Janson and J. Lv, "Panning for gold: model-X knockoffs for
       high dimensional controlled variable selection", JRSS-B 80(3), 551-577, 2018.
    .. [2] R. F. Barber and E. J. Candès, "Controlling the false discovery rate via
       knockoffs", Ann. Statist. 43(5), 2055-2085, 2015.
    .. [3] Z. Ren and R. F. Barber, "Derandomised knockoffs: leveraging e-values for false
       discovery rate control", JRSS-B 86(1), 122-154, 2024.
    .. [4] O. Ledoit and M. Wolf, "A well-conditioned estimator for large-dimensional
       covariance matrices", J. Multivariate Anal. 88(2), 365-411, 2004.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import KnockoffSelector
    >>> data = make_planted_classification(n_samples=100, n_features=400, random_state=0)
    >>> sel = KnockoffSelector(statistic="score_diff", fdr=0.2, random_state=0)
    >>> sel = sel.fit(data.X, data.y)
    >>> bool(sel.support_.sum() >= 5)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "estimator": "no_validation",
        "fdr": [Interval(Real, 0, 1, closed="neither")],
        "statistic": [StrOptions({"auto", "lasso_coef_diff", "score_diff"})],
        "offset": [Interval(Integral, 0, 1, closed="both")],
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "fdr_per_draw": [Interval(Real, 0, 1, closed="neither"), None],
        "covariance": [StrOptions({"auto", "spiked", "ledoit_wolf"}),
                       Interval(Real, 0, 1, closed="right"), "array-like"],
        "alpha": [Interval(Real, 0, None, closed="neither"), None],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "target_type": [StrOptions({"auto", "classification", "regression"})],
    }
    _dense_reason = (
        "model-X knockoffs are dense: the standardised columns (means subtracted) and their "
        "Gaussian knockoffs are n x p arrays whatever the sparsity of X"
    )

    @property
    def _targets(self):  # type: ignore[override]
        """Class labels and continuous targets (the lasso statistic); with ``score_diff``,
        whatever the estimator takes (a survival target with a Cox estimator)."""
        if self.estimator is None:
            return ("classification", "regression")
        base = base_estimator(self.estimator)
        return tuple(getattr(base, "_targets", ("classification",)))

    def _resolved_target_type(self) -> str:
        if self.target_type != "auto" or self.estimator is None:
            return self.target_type
        base = base_estimator(self.estimator)
        return base.get_params(deep=False).get("target_type", "auto")

    def __init__(
        self,
        estimator=None,
        *,
        fdr=0.1,
        statistic="auto",
        offset=1,
        n_draws=1,
        fdr_per_draw=None,
        covariance="auto",
        alpha=None,
        cv=5,
        n_features_to_select=None,
        random_state=None,
        target_type="auto",
    ):
        self.estimator = estimator
        self.fdr = fdr
        self.statistic = statistic
        self.offset = offset
        self.n_draws = n_draws
        self.fdr_per_draw = fdr_per_draw
        self.covariance = covariance
        self.alpha = alpha
        self.cv = cv
        self.n_features_to_select = n_features_to_select
        self.random_state = random_state
        self.target_type = target_type

    def _statistic(self) -> str:
        if self.statistic == "auto":
            # class labels: the Fisher score difference (the lasso keeps a few of many
            # redundant features where n << p, too few for knockoff+: issue #33); continuous
            # targets: the lasso, the knockoffs' native setting
            if self.estimator is None and getattr(self, "target_type_", None) != "classification":
                return "lasso_coef_diff"
            return "score_diff"
        if self.statistic == "lasso_coef_diff" and self.estimator is not None:
            raise ValueError(
                f"statistic='lasso_coef_diff' computes its own lasso; estimator="
                f"{self.estimator!r} is used by statistic='score_diff' only."
            )
        return self.statistic

    def _statistics(self, Z, y_idx, model, statistic, rng, gen):
        """``W`` of every draw (rows) for the standardised varying columns ``Z``."""
        p = Z.shape[1]
        base = None
        if statistic == "score_diff":
            base = clone(base_estimator(self.estimator))
            params = base.get_params(deep=False)
            if "random_state" in params:
                base.set_params(random_state=int(rng.randint(np.iinfo(np.int32).max)))
            if params.get("target_type") == "auto" and self.target_type != "auto":
                base.set_params(target_type=self.target_type)
        W = np.empty((self.n_draws, p))
        alphas = np.zeros(self.n_draws)
        for m in range(self.n_draws):
            Zk = _kernel.sample_knockoffs(model, Z, gen)
            swap = gen.random(p) < 0.5
            A = np.concatenate([np.where(swap, Zk, Z), np.where(swap, Z, Zk)], axis=1)
            del Zk
            if statistic == "lasso_coef_diff":
                seed = int(gen.integers(np.iinfo(np.int32).max))
                mag, alphas[m] = lasso_coef_magnitudes(
                    A, y_idx, self.alpha, self.cv, seed,
                    continuous=self.target_type_ == "regression")
            else:
                mag = fitted_scores(clone(base), A, y_idx)
                big = np.finfo(np.float64).max
                mag = np.nan_to_num(mag, nan=0.0, posinf=big, neginf=-big)
            del A
            with np.errstate(over="ignore", invalid="ignore"):
                w = np.nan_to_num(mag[:p] - mag[p:], nan=0.0)
            W[m] = np.where(swap, -w, w)
        return W, alphas

    def _fit_named(self, name, Z):
        """The correlation model ``name`` ("spiked", "ledoit_wolf", "shrinkage") fitted on Z."""
        if name == "spiked":
            return _kernel.fit_spiked_model(Z)
        return _kernel.fit_knockoff_model(Z, self.covariance if name == "shrinkage" else None)

    def _knockoff_model(self, Z, varying, gen):
        """The knockoff model of the standardised columns ``Z`` (the ``varying`` ones of X),
        the name of the model used and the model check of every candidate.

        The check (:func:`sparsefs._kernels.knockoffs.knockoff_residual`) runs on its own
        generator spawned from ``gen`` (the knockoff draws of the fit are those of ``gen``
        whatever it does). A fitted model is checked on rows it was not fitted on: it is
        fitted on a random half of the rows, checked on the other half; a given correlation
        matrix is checked on every row. ``"auto"`` fits the spiked model unless its check is
        significant (z > CHECK_Z) and the Ledoit-Wolf model leaves less than CHECK_SWITCH of
        its residual; the chosen model is then fitted on every row.
        """
        checker = gen.spawn(1)[0]
        cov = self.covariance
        if not isinstance(cov, (str, Real)):
            corr = np.asarray(cov, dtype=np.float64)
            p_in = self.n_features_in_
            if corr.shape != (p_in, p_in):
                raise ValueError(f"covariance has shape {corr.shape}; a matrix must be "
                                 f"n_features x n_features = ({p_in}, {p_in}).")
            if not np.all(np.isfinite(corr)) or np.any(np.diag(corr) <= 0):
                raise ValueError("covariance must be finite with a positive diagonal.")
            corr = corr[np.ix_(varying, varying)]
            scale = np.sqrt(np.diag(corr))
            model = _kernel.model_from_correlation(corr / np.outer(scale, scale))
            self.s_scale_ = 1.0
            return model, "given", {"given": _kernel.knockoff_residual(model, Z, checker)}
        if isinstance(cov, str):
            names = ["spiked", "ledoit_wolf"] if cov == "auto" else [cov]
        else:
            names = ["shrinkage"]
        n = Z.shape[0]
        checks = {}
        if n >= CHECK_MIN_ROWS:
            order = checker.permutation(n)
            fit_rows, held_out = order[: n // 2], order[n // 2:]
            Za, _, _ = _kernel.standardize(Z[fit_rows])
            for name in names:
                checks[name] = _kernel.knockoff_residual(self._fit_named(name, Za),
                                                         Z[held_out], checker)
        chosen = names[0]
        if cov == "auto" and checks and checks["spiked"].z > CHECK_Z and (
                checks["ledoit_wolf"].excess < CHECK_SWITCH * checks["spiked"].excess):
            chosen = "ledoit_wolf"
        model = self._fit_named(chosen, Z)
        check = checks.get(chosen)
        self.s_scale_ = 1.0
        if check is not None and check.z > CHECK_Z and check.fraction > CHECK_TOLERATED:
            # the missed covariances Cov(z_j - z~_j, z_k) = s (Sigma^-1 Sigma_true)_jk scale
            # with s: knockoffs closer to their features miss less (and find less)
            self.s_scale_ = max(math.sqrt(CHECK_TOLERATED / check.fraction), CHECK_MIN_S_SCALE)
            model = dataclasses.replace(model, s=model.s * self.s_scale_)
        return model, chosen, checks

    def _warn_model(self):
        check = self.model_check_.get(self.covariance_)
        if check is None or check.z <= CHECK_Z or check.fraction <= CHECK_WARN_FRACTION:
            return
        warnings.warn(
            f"KnockoffSelector: the {self.covariance_!r} correlation model misses "
            f"{check.fraction:.0%} of the features' correlation on held-out rows (model_check_; "
            f"z = {check.z:.1f}): a null feature correlated with a true one may beat its "
            f"knockoff more often than not. s was scaled by {self.s_scale_:.2f} to compensate "
            "(less power); the FDR guarantee is approximate. Pass the known correlation "
            "matrix (covariance=...) if there is one, or use ErrorControlSelector.",
            KnockoffModelWarning, stacklevel=4,
        )

    @one_blas_thread  # n x n eigen-solves, thin GEMMs, coordinate descent: one thread wins
    def _fit(self, X, y_idx):
        p = X.shape[1]
        statistic = self._statistic()
        if statistic == "lasso_coef_diff" and self.target_type_ == "survival":
            raise ValueError(
                "statistic='lasso_coef_diff' is the least-squares lasso (class labels, "
                "continuous targets); for a survival target use statistic='score_diff' with a "
                "Cox estimator, e.g. estimator=LassoSelector(n_features_to_select=20) (the Cox "
                "lasso) or UnivariateScore()."
            )
        if self.n_draws > 1 and self.offset != 1:
            raise ValueError(f"n_draws={self.n_draws} aggregates knockoff+ e-values, which "
                             f"need offset=1; got offset={self.offset}.")
        q_draw = self.fdr if self.n_draws == 1 else (
            self.fdr / 2 if self.fdr_per_draw is None else self.fdr_per_draw)
        min_positive = math.ceil(self.offset / q_draw - 1e-12)
        if self.n_features_to_select_ is None and p < min_positive:
            warnings.warn(
                f"KnockoffSelector: n_features={p} < 1/q = {1 / q_draw:.3g}: knockoff+ at "
                f"q={q_draw:.3g} cannot select any feature (it needs >= {min_positive} "
                "positive statistics); raise fdr or pass n_features_to_select.",
                UserWarning, stacklevel=3,
            )
        rng = check_random_state(self.random_state)
        gen = np.random.default_rng(rng.randint(np.iinfo(np.int32).max, size=4))
        Z, _, _ = _kernel.standardize(X)
        # constant columns are not tested: W = 0 (neutral in the filter), ranked last; exact
        # copies of a column are one hypothesis: tested once, the copy shares the statistic
        first = duplicate_column_groups(X)
        copy = first != np.arange(p)
        varying = np.flatnonzero(np.any(Z != 0, axis=0) & ~copy)
        Z = np.ascontiguousarray(Z[:, varying])
        pv = varying.shape[0]
        W = np.zeros((self.n_draws, p))
        alphas = np.zeros(self.n_draws)
        model, self.covariance_, self.model_check_, self.s_scale_ = None, None, {}, 1.0
        if pv:
            model, self.covariance_, self.model_check_ = self._knockoff_model(Z, varying, gen)
            self._warn_model()
            W[:, varying], alphas = self._statistics(Z, y_idx, model, statistic, rng, gen)
        thresholds = np.array([_kernel.knockoff_threshold(w, q_draw, self.offset) for w in W])
        n_positive = int(np.count_nonzero(W > 0, axis=1).max())
        if self.n_features_to_select_ is None and p >= min_positive > n_positive:
            warnings.warn(
                f"KnockoffSelector: only {n_positive} statistics W_j > 0, fewer than "
                f"ceil(1/q) = {min_positive}: knockoff+ at q={q_draw:.3g} cannot select any "
                "feature. Raise fdr, use a stronger statistic, or use ErrorControlSelector.",
                UserWarning, stacklevel=3,
            )
        self.statistics_ = W
        self.thresholds_ = thresholds
        self.noise_variance_ = model.shrinkage if model is not None else np.nan
        self.n_components_ = model.components.shape[1] if model is not None else 0
        self.knockoff_s_ = model.s if model is not None else np.nan
        self.lasso_alphas_ = alphas if statistic == "lasso_coef_diff" else None
        if self.n_draws == 1:
            self.evalues_ = None
            scores = W[0].copy()
            self.threshold_ = float(thresholds[0])
            selected = scores >= self.threshold_
        else:
            e = np.zeros(p)
            if pv:
                e[varying] = np.mean(
                    [_kernel.knockoff_evalues(w[varying], q_draw) for w in W], axis=0)
            self.evalues_ = e
            scores = e.copy()
            selected = np.zeros(p, dtype=bool)
            if pv:
                selected[varying] = _kernel.e_benjamini_hochberg(e[varying], self.fdr)
            self.threshold_ = float(e[selected].min()) if selected.any() else np.inf
        constant = np.ones(p, dtype=bool)
        constant[varying] = False
        if copy.any():
            src = first[copy]
            W[:, copy] = W[:, src]
            scores[copy], selected[copy], constant[copy] = scores[src], selected[src], constant[src]
            if self.evalues_ is not None:
                self.evalues_[copy] = self.evalues_[src]
        scores[constant] = -np.inf
        if self.n_features_to_select_ is None:
            self.n_features_to_select_ = int(selected.sum())
        self._set_selection(scores + 0.0)

