"""The base of the penalised linear selectors on one-hot classes (LsL21, LlL21, RFS, the l1 /
elastic-net logistic selectors): their shared parameters and the l2,1 proximal-gradient fit."""

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from sparsefs._kernels.columns import duplicate_partition
from sparsefs._kernels.group_lasso import GroupL21Penalty, ProxGradResult, row_norms
from sparsefs._kernels.l21 import prepare_design, selection_scores
from sparsefs._kernels.smba import merge_duplicate_rows
from sparsefs._kernels.stats import one_hot_dense
from sparsefs.base import BaseSelector
from sparsefs.exceptions import ConvergenceWarning
from sparsefs.utils._sklearn_compat import Interval

__all__ = ["SparseLinearSelector", "merged_scores", "warn_unconverged"]


class SparseLinearSelector(BaseSelector):
    r"""Shared parameters and ``fit`` of the penalised linear selectors on one-hot classes.

    Holds the parameters common to :class:`~sparsefs.selection.LsL21`,
    :class:`~sparsefs.selection.LlL21`, :class:`~sparsefs.selection.RFS` and the l1 /
    elastic-net logistic selectors (``alpha``, ``standardize``, ``max_iter``, ``tol``), and the
    template ``_fit`` of the l2,1-penalised models solved by proximal gradient at
    :math:`\lambda = \alpha\,\lambda_{max}`: a subclass only names its kernel through two
    hooks,

    * ``_lambda_max(X, Y)`` - the smallest penalty with :math:`W = 0` for the prepared design;
    * ``_solve(X, Y, lam_max)`` - the :class:`~sparsefs._kernels.group_lasso.ProxGradResult` at
      ``alpha``; by default it calls ``_solver(X, Y, alpha, lam_max=, max_iter=, tol=)``, so a
      kernel with that signature is plugged in as
      ``_lambda_max = staticmethod(kernel.lambda_max)`` and
      ``_solver = staticmethod(kernel.solve)``.

    Subclasses with another solver (RFS's reweighting, the logistic path) override ``_fit``.
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "standardize": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, n_features_to_select=None, *, alpha=0.5, standardize=True, max_iter=1000,
                 tol=1e-4):
        self.n_features_to_select = n_features_to_select
        self.alpha = alpha
        self.standardize = standardize
        self.max_iter = max_iter
        self.tol = tol

    def _lambda_max(self, X: np.ndarray, Y: np.ndarray) -> float:
        raise NotImplementedError

    def _solve(self, X: np.ndarray, Y: np.ndarray, lam_max: float) -> ProxGradResult:
        return self._solver(X, Y, self.alpha, lam_max=lam_max, max_iter=self.max_iter,
                            tol=self.tol)

    def _solver(self, X, Y, ratio, *, lam_max, max_iter, tol) -> ProxGradResult:
        raise NotImplementedError

    def _target_matrix(self, y) -> np.ndarray:
        """The response matrix Y: one-hot class indicators (subclasses taking continuous
        targets use them as they are)."""
        return one_hot_dense(y, int(y.max()) + 1)

    def _fit(self, X, y_idx):
        prep = prepare_design(X, center=True, standardize=self.standardize)
        Y = self._target_matrix(y_idx)
        lam_max = self._lambda_max(prep.X, Y)
        res = self._solve(prep.X, Y, lam_max)
        warn_unconverged(self, res)
        lam = max(self.alpha * lam_max, 1e-300)
        coef, scores = merged_scores(prep, res.coef, res.grad, GroupL21Penalty(), lam)
        unit = self._unit(prep)
        self.coef_ = coef / unit
        self.intercept_ = res.intercept
        self.alpha_max_ = float(lam_max) * unit
        self.n_iter_ = int(res.n_iter)
        self.objective_ = res.objective
        self.kkt_residual_ = float(res.kkt)
        support = None
        if self.n_features_to_select_ is None:
            support = (row_norms(coef) > 0) & ~prep.constant
        self._set_selection(scores, support)

    def _unit(self, prep) -> float:
        """The factor mapping coefficients of the prepared design back to X's units.

        1 when standardised; otherwise the common scale ``prepare_design`` divided by.
        """
        if self.standardize or not prep.scale.size:
            return 1.0
        return float(prep.scale[0])


def merged_scores(prep, coef: np.ndarray, grad: np.ndarray, penalty, lam: float):
    """``(coef, scores_)`` of a penalised fit on the prepared design ``prep``.

    Exactly duplicated features: their rows of W enter the loss only through their sum, so the
    mean row keeps an optimum optimal (convex penalty; :func:`_kernels.smba.merge_duplicate_rows`)
    and gives the copies bit-identical rows and scores. A zero row scores how close it is to
    entering at ``lam`` (``penalty.entry_closeness`` of its gradient row).
    """
    groups = duplicate_partition(prep.X) if isinstance(prep.X, np.ndarray) else None
    coef = merge_duplicate_rows(coef, groups)
    grad = merge_duplicate_rows(grad, groups)
    return coef, selection_scores(coef, penalty.entry_closeness(grad, lam), prep.constant)


def warn_unconverged(est, res: ProxGradResult) -> None:
    """``ConvergenceWarning`` when a proximal-gradient fit stopped at ``max_iter``."""
    if not res.converged:
        warnings.warn(
            f"{type(est).__name__} did not converge in max_iter={est.max_iter} iterations "
            f"(relative KKT residual {res.kkt:.1e} > tol={est.tol}); increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=4,
        )
