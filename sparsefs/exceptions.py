"""Warnings and errors raised by sparsefs."""

from sklearn.exceptions import ConvergenceWarning

__all__ = [
    "ConvergenceWarning",
    "KnockoffModelWarning",
    "NoFeatureSelectedWarning",
    "RestartWarning",
]


class NoFeatureSelectedWarning(UserWarning):
    """Warned when a selector's own rule (``n_features_to_select=None``) keeps no feature."""


class RestartWarning(UserWarning):
    """Warned when a non-convex fit's best optimum was reached by at most one of its
    independent starts: another seed may well end elsewhere (``start_objectives_`` holds
    the spread; for a stable feature list, see ``StabilitySelector`` over seeds)."""


class KnockoffModelWarning(UserWarning):
    """Warned when the correlation model of model-X knockoffs misses a sizeable share of the
    features' correlation on held-out rows (``KnockoffSelector.model_check_``): a null
    feature correlated with a true one may then beat its knockoff more often than not, and
    the FDR can exceed its target."""
