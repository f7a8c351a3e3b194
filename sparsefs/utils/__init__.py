"""Utilities: the method registry and result tables."""

from sparsefs.utils._registry import MethodInfo, get_method, list_methods
from sparsefs.utils._results import scores_frame

__all__ = ["MethodInfo", "get_method", "list_methods", "scores_frame"]
