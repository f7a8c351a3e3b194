"""Warnings and errors raised by sparsefs."""

from sklearn.exceptions import ConvergenceWarning

__all__ = ["ConvergenceWarning", "NoFeatureSelectedWarning", "RestartWarning"]


class NoFeatureSelectedWarning(UserWarning):
    """Warned when a selector's own rule (``n_features_to_select=None``) keeps no feature."""


class RestartWarning(UserWarning):
    """Warned when a non-convex fit's best optimum was reached by at most one of its
    independent starts: another seed may well end elsewhere (``start_objectives_`` holds
    the spread; for a stable feature list, see ``StabilitySelector`` over seeds)."""
