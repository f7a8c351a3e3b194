"""Warnings and errors raised by sparsefs."""

from sklearn.exceptions import ConvergenceWarning

__all__ = ["ConvergenceWarning", "NoFeatureSelectedWarning"]


class NoFeatureSelectedWarning(UserWarning):
    """Warned when a selector's own rule (``n_features_to_select=None``) keeps no feature."""
