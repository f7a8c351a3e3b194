r"""Model-X Gaussian knockoffs for p >> n, the knockoff+ threshold and derandomising e-values.

Construction (Candès, Fan, Janson & Lv, JRSS-B 80, 2018). The columns of X are standardised
to mean 0 and variance 1 (:math:`Z`); their correlation is estimated by linear shrinkage
(Ledoit & Wolf, J. Multivariate Anal. 88, 2004) towards the identity,

.. math::

    \hat\Sigma = (1 - \delta) S + \delta I = \delta I + U \Lambda U^\top,
    \qquad S = Z^\top Z / n,\quad \Lambda = (1 - \delta)\,\mathrm{diag}(\sigma_k^2)/n,

with :math:`Z = V \mathrm{diag}(\sigma) U^\top` the thin SVD (:math:`U` is p x r,
:math:`r \le n`). Equicorrelated knockoffs take :math:`D = sI`,
:math:`s = \min(2\lambda_{\min}(\hat\Sigma), 1)` and draw

.. math::

    \tilde z \mid z \sim N\!\left(z - s\hat\Sigma^{-1} z,\; 2sI - s^2\hat\Sigma^{-1}\right).

Because :math:`\hat\Sigma^{-1} = \delta^{-1}(I - UU^\top) + U(\delta I + \Lambda)^{-1}U^\top`
(Woodbury), the conditional mean and the square root of the conditional covariance,

.. math::

    C^{1/2} = c_0 (I - UU^\top) + U\,\mathrm{diag}(c_k)\,U^\top,\quad
    c_0 = \sqrt{2s - s^2/\delta},\quad c_k = \sqrt{2s - s^2/(\delta + \lambda_k)},

are applied as products with the n x r matrices :math:`ZU` and :math:`GU` (:math:`G` the
n x p Gaussian draw): time and memory O(n p r), never a p x p matrix.

Selection: statistics :math:`W_j` with the flip-sign property; the knockoff(+) threshold

.. math::

    T = \min\left\{t > 0 : \frac{o + \#\{j : W_j \le -t\}}{\max(1, \#\{j : W_j \ge t\})}
    \le q\right\}

(:math:`o = 1` knockoff+, FDR :math:`\le q`; :math:`o = 0` knockoff, modified FDR), and
:math:`T = +\infty` (nothing selected) when no :math:`t` qualifies (Barber & Candès, Ann.
Statist. 43, 2015). Derandomised knockoffs (Ren & Barber, JRSS-B 86, 2024) turn each draw's
selection at level :math:`q_{kn}` into e-values
:math:`e_j = p\,1\{W_j \ge T\} / (1 + \#\{k : W_k \le -T\})`, average them over draws and
apply e-BH at level :math:`q`.
"""

from dataclasses import dataclass

import numpy as np

__all__ = [
    "KnockoffModel",
    "ResidualCheck",
    "e_benjamini_hochberg",
    "fit_knockoff_model",
    "fit_spiked_model",
    "knockoff_evalues",
    "knockoff_residual",
    "knockoff_threshold",
    "ledoit_wolf_shrinkage",
    "model_from_correlation",
    "sample_knockoffs",
    "standardize",
]


def standardize(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Columns to mean 0 and (population) variance 1; constant columns become 0.

    Exact at any magnitude (1e-300 to 1e300): each column is first divided by its largest
    absolute value.

    Returns
    -------
    Z : ndarray of shape (n, p)
    mean, scale : ndarray of shape (p,)
        ``Z = (X - mean) / scale`` for non-constant columns.
    """
    X = np.asarray(X, dtype=np.float64)
    # columns pre-scaled by their largest magnitude: no overflow (1e300) or underflow
    # (1e-300) in the squares; Z is invariant to that scale
    big = np.abs(X).max(axis=0)
    big[big == 0] = 1.0
    Z = X / big
    mean = Z.mean(axis=0)
    Z -= mean
    unit = np.sqrt(np.einsum("ij,ij->j", Z, Z) / X.shape[0])
    tiny = unit <= 1e-12 * np.maximum(np.abs(mean), 1e-300)
    unit[tiny | (unit == 0)] = 1.0
    Z /= unit
    Z[:, tiny] = 0.0
    return Z, mean * big, unit * big


def ledoit_wolf_shrinkage(Z: np.ndarray) -> float:
    r"""Ledoit-Wolf shrinkage intensity of the (centred) columns of ``Z`` towards
    :math:`\mu I`, :math:`\mu = \mathrm{tr}(S)/p`, in O(n^2 p) (through the n x n Gram).

    :math:`\delta = \min(b^2, d^2)/d^2` with :math:`d^2 = \|S - \mu I\|_F^2/p` and
    :math:`b^2 = \sum_i \|z_i z_i^\top - S\|_F^2 / (n^2 p)`, using
    :math:`\|S\|_F^2 = \|ZZ^\top\|_F^2/n^2` and
    :math:`\sum_i \|z_i z_i^\top - S\|_F^2 = \sum_i \|z_i\|^4 - n\|S\|_F^2`.

    Parameters
    ----------
    Z : ndarray of shape (n, p)
        Centred columns (not re-centred here).

    Returns
    -------
    float in [0, 1]
    """
    n, p = Z.shape
    gram = Z @ Z.T
    s_fro2 = float(np.einsum("ij,ij->", gram, gram)) / n**2
    mu = float(np.trace(gram)) / (n * p)
    d2 = (s_fro2 - mu * mu * p) / p
    b2 = (float(np.sum(np.diag(gram) ** 2)) - n * s_fro2) / (n**2 * p)
    if d2 <= 0:
        return 1.0
    return float(min(max(b2, 0.0), d2) / d2)


@dataclass(frozen=True)
class KnockoffModel:
    r"""The factors of :math:`\hat\Sigma = \delta I + U\,\mathrm{diag}(\lambda)\,U^\top` and the
    equicorrelated :math:`s`.

    Attributes
    ----------
    components : ndarray of shape (p, r)
        :math:`U`, orthonormal columns.
    eigenvalues : ndarray of shape (r,)
        :math:`\lambda_k` (the eigenvalues of :math:`\hat\Sigma` on :math:`U` are
        :math:`\delta + \lambda_k`).
    shrinkage : float
        :math:`\delta`.
    s : float
        The equicorrelated :math:`s = \min(2\lambda_{\min}(\hat\Sigma), 1)`;
        :math:`\mathrm{corr}(z_j, \tilde z_j) = 1 - s`.
    """

    components: np.ndarray
    eigenvalues: np.ndarray
    shrinkage: float
    s: float

    @property
    def n_features(self) -> int:
        """p."""
        return int(self.components.shape[0])

    @property
    def min_eigenvalue(self) -> float:
        r""":math:`\lambda_{\min}(\hat\Sigma)`."""
        p, r = self.components.shape
        low = self.shrinkage + (float(self.eigenvalues.min()) if r else 0.0)
        return low if r == p else min(self.shrinkage, low)


def _right_singular(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Right singular vectors :math:`U` (p x r) and squared singular values of ``Z``.

    From the eigen-decomposition of the smaller Gram matrix (n x n when n < p:
    :math:`ZZ^\top = V \mathrm{diag}(\sigma^2) V^\top`, :math:`U = Z^\top V
    \mathrm{diag}(1/\sigma)`), several times cheaper than an SVD of the n x p matrix.
    Directions with :math:`\sigma^2 \le 10^{-8} \sigma^2_{max}` are dropped (their
    eigenvalue :math:`\delta + \lambda_k` differs from :math:`\delta` by less than
    :math:`10^{-8}\lambda_{max}`); the rows of ``Z`` need not lie in the span of :math:`U`
    for :func:`sample_knockoffs`.
    """
    n, p = Z.shape
    if n < p:
        sq, V = np.linalg.eigh(Z @ Z.T)
        keep = sq > 1e-8 * max(sq.max(initial=0.0), 1e-300)
        sq, V = sq[keep][::-1], V[:, keep][:, ::-1]
        return np.ascontiguousarray((Z.T @ V) / np.sqrt(sq)), sq
    sq, U = np.linalg.eigh(Z.T @ Z)
    keep = sq > 1e-8 * max(sq.max(initial=0.0), 1e-300)
    return np.ascontiguousarray(U[:, keep][:, ::-1]), sq[keep][::-1]


def fit_knockoff_model(Z: np.ndarray, shrinkage: float | None = None) -> KnockoffModel:
    r"""The low-rank-plus-identity correlation estimate and equicorrelated :math:`s`.

    Parameters
    ----------
    Z : ndarray of shape (n, p)
        Standardised columns (:func:`standardize`).
    shrinkage : float in (0, 1] or None
        :math:`\delta`; ``None``: :func:`ledoit_wolf_shrinkage`, floored at ``1e-3`` so that
        :math:`\hat\Sigma` is well conditioned when n > p.

    Returns
    -------
    KnockoffModel
    """
    n = Z.shape[0]
    delta = ledoit_wolf_shrinkage(Z) if shrinkage is None else float(shrinkage)
    delta = min(1.0, max(delta, 1e-3)) if shrinkage is None else delta
    if not 0 < delta <= 1:
        raise ValueError(f"shrinkage={shrinkage!r} must lie in (0, 1].")
    U, sq = _right_singular(Z)
    lam = (1.0 - delta) * sq / n
    model = KnockoffModel(U, lam, delta, 1.0)
    s = min(2.0 * model.min_eigenvalue, 1.0)
    return KnockoffModel(U, lam, delta, s)


def fit_spiked_model(Z: np.ndarray, max_iter: int = 100) -> KnockoffModel:
    r"""A spiked (factor) correlation estimate, de-biased for p >> n, and equicorrelated
    :math:`s`.

    In the spiked model :math:`\Sigma = \sigma^2 (I + \sum_k (\ell_k - 1) u_k u_k^\top)`
    with :math:`\gamma = p/n`, a sample eigenvalue :math:`\hat\lambda` of :math:`S` above the
    Marchenko-Pastur edge :math:`\sigma^2(1 + \sqrt\gamma)^2` comes from a spike
    :math:`\ell` with :math:`\hat\lambda/\sigma^2 = \ell(1 + \gamma/(\ell - 1))`, and its
    eigenvector has squared cosine
    :math:`c^2 = (1 - \gamma/(\ell-1)^2)/(1 + \gamma/(\ell - 1))` with the true one
    (Baik, Ben Arous & Péché, Ann. Probab. 33, 2005; Paul, Statist. Sinica 17, 2007).
    The Frobenius-optimal estimate on the sample eigenvectors keeps
    :math:`\eta_k = 1 + (\ell_k - 1) c_k^2` (Donoho, Gavish & Johnstone, Ann. Statist. 46,
    2018), every other direction gets :math:`\sigma^2`, and :math:`\sigma^2` solves
    :math:`\mathrm{tr}\,\hat\Sigma_{\text{spikes}} = \mathrm{tr}\,S`, i.e.
    :math:`\sigma^2 = \mathrm{tr}\,S / (p - r + \sum_k \ell_k)` (fixed point). With no
    eigenvalue above the edge (e.g. independent features) :math:`\hat\Sigma = \sigma^2 I`:
    unlike linear shrinkage, the inflated sample eigenvalues of p >> n data are not copied
    into the knockoffs.

    Parameters
    ----------
    Z : ndarray of shape (n, p)
        Standardised columns.
    max_iter : int, default=100
        Fixed-point iterations for :math:`\sigma^2`.

    Returns
    -------
    KnockoffModel
        ``shrinkage`` is :math:`\sigma^2`, ``eigenvalues`` :math:`\sigma^2(\eta_k - 1)`.
    """
    n, p = Z.shape
    U, sq = _right_singular(Z)
    lam_hat = sq / n
    total = float(np.einsum("ij,ij->", Z, Z)) / n
    gamma = p / n
    edge = (1.0 + np.sqrt(gamma)) ** 2
    sigma2 = total / p
    spike = np.zeros(lam_hat.shape[0], dtype=bool)
    ell = np.zeros(0)
    for _ in range(max_iter):
        mu = lam_hat / sigma2
        spike = mu > edge
        b = 1.0 + mu[spike] - gamma
        ell = 0.5 * (b + np.sqrt(np.maximum(b * b - 4.0 * mu[spike], 0.0)))
        new = total / (p - int(spike.sum()) + float(ell.sum()))
        converged = abs(new - sigma2) <= 1e-12 * sigma2
        sigma2 = new
        if converged:
            break
    mu = lam_hat / sigma2
    spike = mu > edge
    b = 1.0 + mu[spike] - gamma
    ell = 0.5 * (b + np.sqrt(np.maximum(b * b - 4.0 * mu[spike], 0.0)))
    with np.errstate(divide="ignore", invalid="ignore"):
        c2 = (1.0 - gamma / (ell - 1.0) ** 2) / (1.0 + gamma / (ell - 1.0))
    eta = 1.0 + (ell - 1.0) * np.clip(np.nan_to_num(c2), 0.0, 1.0)
    model = KnockoffModel(np.ascontiguousarray(U[:, spike]), sigma2 * (eta - 1.0), sigma2, 1.0)
    return KnockoffModel(model.components, model.eigenvalues, sigma2,
                         min(2.0 * model.min_eigenvalue, 1.0))


def model_from_correlation(corr: np.ndarray) -> KnockoffModel:
    r"""Exact Gaussian knockoffs of a known correlation matrix :math:`\Sigma` (p x p):
    :math:`\Sigma = I + V\,\mathrm{diag}(w - 1)\,V^\top` from its eigen-decomposition
    (:math:`\delta = 1`, every direction kept), equicorrelated :math:`s = \min(2 w_{\min}, 1)`.

    Parameters
    ----------
    corr : ndarray of shape (p, p)
        A symmetric positive definite correlation matrix (unit diagonal).

    Returns
    -------
    KnockoffModel
    """
    corr = np.asarray(corr, dtype=np.float64)
    w, V = np.linalg.eigh(0.5 * (corr + corr.T))
    if w.min() <= 1e-10 * max(w.max(), 1e-300):
        raise ValueError(f"the correlation matrix is not positive definite (smallest "
                         f"eigenvalue {w.min():.3g}).")
    return KnockoffModel(np.ascontiguousarray(V), w - 1.0, 1.0, float(min(2.0 * w.min(), 1.0)))


@dataclass(frozen=True)
class ResidualCheck:
    r"""How far knockoffs reproduce the features' correlations, on rows the model was not
    fitted on (:func:`knockoff_residual`).

    Attributes
    ----------
    excess : float
        :math:`\frac1p\sum_{j \ne k} \mathrm{Cov}(z_j - \tilde z_j, z_k)^2`, estimated without
        bias (0 in expectation for valid knockoffs).
    energy : float
        :math:`\frac1p\sum_{j \ne k} \mathrm{Cov}(z_j, z_k)^2`, the features' correlation
        energy, estimated the same way.
    z : float
        ``excess`` over its standard error (about N(0, 1) for valid knockoffs).
    """

    excess: float
    energy: float
    z: float

    @property
    def fraction(self) -> float:
        """``excess / energy``: the share of the correlation the knockoffs miss (0 when the
        features are not detectably correlated)."""
        return float(self.excess / self.energy) if self.energy > 0 else 0.0


def _offdiag_u_statistic(A: np.ndarray, B: np.ndarray) -> tuple[float, float]:
    r""":math:`T = \frac{1}{n^2}\sum_{i \ne i'} \sum_{j \ne k} a_{ij} b_{ik} a_{i'j} b_{i'k}`
    (unbiased for :math:`\frac{n-1}{n}\sum_{j\ne k}\mathrm{Cov}(a_j, b_k)^2` when the rows are
    independent with mean 0) and its standard error under :math:`E\,T = 0`, both from the
    n x n Gram matrices in O(n^2 p): the pair kernel is
    :math:`h_{ii'} = (a_i\cdot a_{i'})(b_i\cdot b_{i'}) - \sum_j a_{ij}a_{i'j}b_{ij}b_{i'j}`, a
    degenerate U-statistic, :math:`\mathrm{Var}\,T \approx 2\sum_{i \ne i'} h_{ii'}^2 / n^4`."""
    n = A.shape[0]
    AB = A * B
    H = (A @ A.T) * (B @ B.T) - AB @ AB.T
    np.fill_diagonal(H, 0.0)
    return float(H.sum()) / n**2, float(np.sqrt(2.0 * np.sum(H * H))) / n**2


def knockoff_residual(model: KnockoffModel, Z: np.ndarray, rng: np.random.Generator
                      ) -> ResidualCheck:
    r"""The model check: do knockoffs drawn from ``model`` for the rows ``Z`` correlate with
    the other features as the features themselves do?

    Valid knockoffs satisfy :math:`\mathrm{Cov}(\tilde z_j, z_k) = \mathrm{Cov}(z_j, z_k)` for
    :math:`j \ne k`: with :math:`d_j = z_j - \tilde z_j`, every :math:`\mathrm{Cov}(d_j, z_k)` is
    0. A model that misses part of the correlation (a low-rank model of banded or AR(1)
    correlation) leaves :math:`\mathrm{Cov}(d_j, z_k) = s\,(\hat\Sigma^{-1}\Sigma)_{jk} \ne 0`,
    and a null feature correlated with a true one then beats its knockoff more often than not:
    the FDR exceeds q. The check estimates
    :math:`\frac1p\sum_{j\ne k}\mathrm{Cov}(d_j, z_k)^2` from one draw on ``Z`` (rows the model
    was **not** fitted on: in-sample, the fit's own error hides the misfit), unbiased by
    leaving out the i = i' terms (:func:`_offdiag_u_statistic`), beside the same estimate of
    :math:`\frac1p\sum_{j \ne k}\mathrm{Cov}(z_j, z_k)^2`.

    Parameters
    ----------
    model : KnockoffModel
    Z : ndarray of shape (n, p)
        Standardised held-out rows (any common mean: the check uses the differences of the
        rows i and i + n // 2).
    rng : numpy.random.Generator

    Returns
    -------
    ResidualCheck
    """
    # differences of pairs of rows: mean 0 exactly, covariance Sigma, independent (centring
    # by a mean estimated from the same rows would correlate them: a bias of order p/n^2)
    m = Z.shape[0] // 2
    Z = (Z[:m] - Z[m:2 * m]) / np.sqrt(2.0)
    n, p = Z.shape
    if n < 2:
        return ResidualCheck(0.0, 0.0, 0.0)
    D = Z - sample_knockoffs(model, Z, rng)
    excess, se = _offdiag_u_statistic(D, Z)
    energy, se_energy = _offdiag_u_statistic(Z, Z)
    # the features count as correlated only when their energy is detectably above 0
    energy = energy if energy > 3.0 * se_energy else 0.0
    scale = n / (n - 1.0) / p
    return ResidualCheck(excess * scale, energy * scale, excess / se if se > 0 else 0.0)


def sample_knockoffs(model: KnockoffModel, Z: np.ndarray, rng: np.random.Generator
                     ) -> np.ndarray:
    r"""One draw of Gaussian knockoffs :math:`\tilde Z` for the rows of ``Z``.

    Parameters
    ----------
    model : KnockoffModel
    Z : ndarray of shape (n, p)
        The standardised data the model was fitted on (or new rows of the same features).
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n, p)
    """
    U, lam, delta, s = model.components, model.eigenvalues, model.shrinkage, model.s
    ZU = Z @ U
    # mean: Z - s Z Sigma^{-1} = Z - (s/delta) (Z - ZU U^T) - s ZU diag(1/(delta+lam)) U^T
    mean = Z * (1.0 - s / delta)
    mean += (ZU * (s / delta - s / (delta + lam))) @ U.T
    G = rng.standard_normal(Z.shape)
    GU = G @ U
    # s (2 - s/delta): exactly 0 at the equicorrelated boundary s = 2 delta
    c0 = np.sqrt(max(s * (2.0 - s / delta), 0.0))
    ck = np.sqrt(np.maximum(s * (2.0 - s / (delta + lam)), 0.0))
    noise = G
    noise *= c0
    noise += (GU * (ck - c0)) @ U.T
    mean += noise
    return mean


def knockoff_threshold(W, fdr: float, offset: int = 1) -> float:
    r"""The knockoff (``offset=0``) or knockoff+ (``offset=1``) threshold :math:`T`.

    Parameters
    ----------
    W : array-like of shape (p,)
    fdr : float in (0, 1)
        :math:`q`.
    offset : {0, 1}

    Returns
    -------
    float
        :math:`T`, one of the :math:`|W_j| > 0`, or ``inf`` when no :math:`t` qualifies
        (then nothing may be selected).
    """
    W = np.asarray(W, dtype=np.float64)
    if np.isnan(W).any():
        raise ValueError("W contains NaN.")
    candidates = np.unique(np.abs(W[W != 0]))
    if candidates.size == 0:
        return np.inf
    neg = np.sort(-W[W < 0])
    pos = np.sort(W[W > 0])
    n_neg = neg.size - np.searchsorted(neg, candidates, side="left")
    n_pos = pos.size - np.searchsorted(pos, candidates, side="left")
    ratio = (offset + n_neg) / np.maximum(1, n_pos)
    ok = np.flatnonzero(ratio <= fdr)
    return float(candidates[ok[0]]) if ok.size else np.inf


def knockoff_evalues(W, fdr: float) -> np.ndarray:
    r"""Knockoff e-values :math:`e_j = p\,1\{W_j \ge T\}/(1 + \#\{k : W_k \le -T\})`, with
    :math:`T` the knockoff+ threshold at level ``fdr`` (all 0 when :math:`T = \infty`).

    Each :math:`e_j` is a relaxed e-value: :math:`\sum_{j \in \mathcal H_0} E[e_j] \le p`
    (Ren & Barber, 2024, Theorem 1).

    Parameters
    ----------
    W : array-like of shape (p,)
    fdr : float in (0, 1)
        :math:`q_{kn}`.

    Returns
    -------
    ndarray of shape (p,)
    """
    W = np.asarray(W, dtype=np.float64)
    T = knockoff_threshold(W, fdr, offset=1)
    if not np.isfinite(T):
        return np.zeros(W.shape[0])
    return W.shape[0] * (W >= T) / (1.0 + np.count_nonzero(W <= -T))


def e_benjamini_hochberg(evalues, alpha: float) -> np.ndarray:
    r"""e-BH (Wang & Ramdas, JRSS-B 84, 2022): reject the :math:`\hat k` largest e-values,
    :math:`\hat k = \max\{k : e_{(k)} \ge m/(\alpha k)\}` (:math:`e_{(1)} \ge e_{(2)} \ge \dots`).

    Parameters
    ----------
    evalues : array-like of shape (m,)
    alpha : float in (0, 1)

    Returns
    -------
    ndarray of bool, shape (m,)
    """
    e = np.asarray(evalues, dtype=np.float64)
    m = e.shape[0]
    ordered = np.sort(e)[::-1]
    passed = ordered >= m / (alpha * np.arange(1, m + 1))
    if not passed.any():
        return np.zeros(m, dtype=bool)
    k = int(np.flatnonzero(passed).max()) + 1
    return e >= ordered[k - 1]
