r"""Penalised model-based clustering (Pan & Shen 2007): an EM for a diagonal Gaussian mixture
with l1-penalised cluster means.

Model: on column-centred data, :math:`x_i \sim \sum_k \pi_k N(\mu_k, V)` with a common diagonal
covariance :math:`V = \mathrm{diag}(\sigma_1^2, \dots, \sigma_p^2)`, fitted by maximising the
penalised log-likelihood

.. math::

    \ell_\alpha = \sum_i \log \sum_k \pi_k\, \phi(x_i; \mu_k, V)
        - \alpha \sum_k \sum_j |\mu_{kj}|.

A feature whose means are all shrunk to 0 (the grand mean) does not separate the clusters:
it is "noise" (Pan & Shen's variable selection). The EM (an ECM: conditional maximisations, so
:math:`\ell_\alpha` never decreases) alternates

* E-step: :math:`\tau_{ik} \propto \pi_k \phi(x_i; \mu_k, V)`;
* M-step: :math:`\pi_k = n_k / n` with :math:`n_k = \sum_i \tau_{ik}`; with the current
  :math:`V`, the soft-thresholded weighted means

  .. math::

      \tilde\mu_{kj} = \frac{\sum_i \tau_{ik} x_{ij}}{n_k}, \qquad
      \mu_{kj} = \operatorname{sign}(\tilde\mu_{kj})
          \Bigl(|\tilde\mu_{kj}| - \frac{\alpha\, \sigma_j^2}{n_k}\Bigr)_+

  (the exact maximiser of the penalised expected log-likelihood in :math:`\mu`); then
  :math:`\sigma_j^2 = \frac1n \sum_k \sum_i \tau_{ik} (x_{ij} - \mu_{kj})^2` (plus a small
  ``reg_covar``, as scikit-learn's ``GaussianMixture`` does).

The tuning parameter :math:`\alpha` is chosen by Pan & Shen's BIC,
:math:`-2 \ell_0 + \log(n)\, d_e` with :math:`d_e = (K - 1) + p + \#\{\mu_{kj} \ne 0\}`.

References
----------
.. [1] W. Pan and X. Shen, "Penalized model-based clustering with application to variable
   selection", JMLR 8:1145-1164, 2007.
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

__all__ = ["EMResult", "bic", "e_step", "m_step", "penalized_gmm_em", "penalized_objective"]

_LOG_2PI = math.log(2.0 * math.pi)


@dataclass(frozen=True)
class EMResult:
    """A converged (or stopped) EM run.

    Attributes
    ----------
    weights : ndarray of shape (n_components,)
        Mixing proportions :math:`\\pi_k`.
    means : ndarray of shape (n_components, n_features)
        Penalised cluster means :math:`\\mu_k` (of the centred data).
    variances : ndarray of shape (n_features,)
        Common diagonal variances :math:`\\sigma_j^2`.
    resp : ndarray of shape (n_samples, n_components)
        Posterior probabilities :math:`\\tau_{ik}` at the final parameters.
    log_likelihood : float
        Unpenalised log-likelihood at the final parameters.
    objective : ndarray of shape (n_iter,)
        Penalised log-likelihood after each EM iteration.
    n_iter : int
    converged : bool
    """

    weights: np.ndarray
    means: np.ndarray
    variances: np.ndarray
    resp: np.ndarray
    log_likelihood: float
    objective: np.ndarray
    n_iter: int
    converged: bool


def e_step(
    X: np.ndarray, weights: np.ndarray, means: np.ndarray, variances: np.ndarray
) -> tuple[np.ndarray, float]:
    r"""Log posterior probabilities and the log-likelihood of a diagonal Gaussian mixture.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    weights : ndarray of shape (n_components,)
    means : ndarray of shape (n_components, n_features)
    variances : ndarray of shape (n_features,)
        Positive.

    Returns
    -------
    log_resp : ndarray of shape (n_samples, n_components)
        :math:`\log \tau_{ik}`.
    log_likelihood : float
        :math:`\sum_i \log \sum_k \pi_k \phi(x_i; \mu_k, V)`.
    """
    inv_sd = 1.0 / np.sqrt(variances)
    Xs = X * inv_sd
    Ms = means * inv_sd
    sq = (Xs * Xs).sum(axis=1)[:, None] - 2.0 * (Xs @ Ms.T) + (Ms * Ms).sum(axis=1)[None, :]
    sq = np.maximum(sq, 0.0)
    with np.errstate(divide="ignore"):
        log_w = np.log(weights)
    log_prob = log_w - 0.5 * (X.shape[1] * _LOG_2PI + np.log(variances).sum() + sq)
    norm = logsumexp(log_prob, axis=1)
    return log_prob - norm[:, None], float(norm.sum())


def m_step(
    X: np.ndarray,
    resp: np.ndarray,
    alpha: float,
    variances: np.ndarray,
    reg_covar: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The penalised M-step: proportions, soft-thresholded means, then common variances.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Column-centred data.
    resp : ndarray of shape (n_samples, n_components)
        :math:`\tau_{ik}`.
    alpha : float
        The l1 penalty :math:`\alpha \ge 0` on the means.
    variances : ndarray of shape (n_features,)
        The current :math:`\sigma_j^2` (used in the threshold :math:`\alpha\sigma_j^2/n_k`).
    reg_covar : float
        Added to the new variances.

    Returns
    -------
    weights, means, variances
    """
    n = X.shape[0]
    nk = resp.sum(axis=0) + 10.0 * np.finfo(np.float64).eps
    raw = (resp.T @ X) / nk[:, None]
    thr = alpha * variances[None, :] / nk[:, None]
    means = np.sign(raw) * np.maximum(np.abs(raw) - thr, 0.0)
    new_var = np.zeros(X.shape[1])
    for k in range(resp.shape[1]):
        diff = X - means[k]
        new_var += resp[:, k] @ (diff * diff)
    return nk / n, means, new_var / n + reg_covar


def penalized_objective(log_likelihood: float, means: np.ndarray, alpha: float) -> float:
    r""":math:`\ell_\alpha = \ell_0 - \alpha \sum_{k,j} |\mu_{kj}|`."""
    return log_likelihood - alpha * float(np.abs(means).sum())


def penalized_gmm_em(
    X: np.ndarray,
    resp0: np.ndarray,
    alpha: float,
    *,
    max_iter: int = 100,
    tol: float = 1e-6,
    reg_covar: float = 1e-6,
) -> EMResult:
    r"""EM for the l1-penalised diagonal Gaussian mixture, started from responsibilities.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Column-centred data.
    resp0 : ndarray of shape (n_samples, n_components)
        Starting :math:`\tau` (e.g. the one-hot matrix of a k-means partition). The first
        variances are the pooled within-cluster variances of the unpenalised weighted means.
    alpha : float
        Penalty :math:`\alpha \ge 0`.
    max_iter : int, default=100
    tol : float, default=1e-6
        Stop when the penalised log-likelihood improves by at most
        ``tol * max(1, |objective|)``.
    reg_covar : float, default=1e-6

    Returns
    -------
    EMResult
    """
    X = np.asarray(X, dtype=np.float64)
    resp = np.asarray(resp0, dtype=np.float64)
    _, _, variances = m_step(X, resp, 0.0, np.ones(X.shape[1]), reg_covar)
    history: list[float] = []
    converged = False
    weights = means = None
    log_lik = -math.inf
    for _ in range(max_iter):
        weights, means, variances = m_step(X, resp, alpha, variances, reg_covar)
        log_resp, log_lik = e_step(X, weights, means, variances)
        resp = np.exp(log_resp)
        history.append(penalized_objective(log_lik, means, alpha))
        if len(history) > 1 and history[-1] - history[-2] <= tol * max(1.0, abs(history[-1])):
            converged = True
            break
    return EMResult(
        weights=weights,
        means=means,
        variances=variances,
        resp=resp,
        log_likelihood=log_lik,
        objective=np.asarray(history),
        n_iter=len(history),
        converged=converged,
    )


def bic(log_likelihood: float, n_samples: int, n_components: int, means: np.ndarray) -> float:
    r"""Pan & Shen's BIC: :math:`-2\ell_0 + \log(n)\,[(K - 1) + p + \#\{\mu_{kj} \ne 0\}]`."""
    p = means.shape[1]
    d_e = (n_components - 1) + p + int(np.count_nonzero(means))
    return -2.0 * log_likelihood + math.log(n_samples) * d_e
