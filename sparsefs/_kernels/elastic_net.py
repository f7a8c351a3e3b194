r"""The elastic-net penalty: proximal operator, optimality conditions, :math:`\lambda_{max}`.

.. math::

    \lambda\,\Omega(W) = \lambda\Big(\rho\|W\|_1 + \frac{1-\rho}{2}\|W\|_F^2\Big),
    \qquad \rho \in (0, 1]

(Zou & Hastie 2005; :math:`\rho = 1` is the lasso, Tibshirani 1996). Its proximal operator is
entry-wise soft-thresholding followed by a shrinkage,

.. math::

    \operatorname{prox}_{t\lambda\Omega}(v) = \frac{\operatorname{sign}(v)
        \max(|v| - t\lambda\rho,\ 0)}{1 + t\lambda(1-\rho)},

and :math:`W = 0` is optimal for a smooth data fit with gradient :math:`G^0` at 0 exactly when
:math:`\lambda \ge \max_{jk}|G^0_{jk}|/\rho`. The solver and the path are in
:mod:`sparsefs._kernels.l21` and :mod:`sparsefs._kernels.lasso`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ElasticNetPenalty"]


@dataclass(frozen=True)
class ElasticNetPenalty:
    r"""Entry-wise elastic net :math:`\lambda(\rho\|W\|_1 + \tfrac{1-\rho}{2}\|W\|_F^2)`, ``rho`` =
    ``l1_ratio`` in (0, 1] (``rho = 1``: the lasso).

    KKT: :math:`G_{jk} + \lambda(1-\rho) w_{jk} + \lambda\rho\,\mathrm{sign}(w_{jk}) = 0` on nonzero
    entries, :math:`|G_{jk}| \le \lambda\rho` on zero entries. A feature (row) enters when its
    largest :math:`|G_{jk}|` reaches :math:`\lambda\rho`.
    """

    l1_ratio: float = 1.0
    name: str = field(default="elastic_net", init=False)

    def value(self, W: np.ndarray, lam: float) -> float:
        rho = self.l1_ratio
        return lam * (rho * float(np.abs(W).sum()) + 0.5 * (1 - rho) * float(np.sum(W * W)))

    def prox(self, V: np.ndarray, step_lam: float) -> np.ndarray:
        rho = self.l1_ratio
        return np.sign(V) * np.maximum(np.abs(V) - step_lam * rho, 0.0) / (
            1.0 + step_lam * (1 - rho)
        )

    def lam_max(self, G0: np.ndarray) -> float:
        return float(np.abs(G0).max(initial=0.0)) / self.l1_ratio

    def row_violation(self, W: np.ndarray, G: np.ndarray, lam: float) -> np.ndarray:
        rho = self.l1_ratio
        viol = np.maximum(np.abs(G) - lam * rho, 0.0)
        nz = W != 0
        viol[nz] = np.abs(G[nz] + lam * (1 - rho) * W[nz] + lam * rho * np.sign(W[nz]))
        return _row_max(viol)

    def entry_closeness(self, G: np.ndarray, lam: float) -> np.ndarray:
        return _row_max(np.abs(G)) / (lam * self.l1_ratio) - 1.0


def _row_max(A: np.ndarray) -> np.ndarray:
    """``A.max(axis=1)`` column by column (the same values: a maximum is exact); numpy's
    reduction over a short last axis costs ~10x more per entry, and the lasso's path asks
    this of a d x K gradient at every working set."""
    if A.ndim != 2 or A.shape[1] < 2:
        return A.max(axis=1)
    out = A[:, 0].copy()
    for k in range(1, A.shape[1]):
        np.maximum(out, A[:, k], out=out)
    return out
