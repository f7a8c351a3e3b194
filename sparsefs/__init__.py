"""sparsefs: sparse feature selection for high-dimensional data.

Exact where the math allows, fast, and scikit-learn native. Every estimator follows one selection
contract (see :mod:`sparsefs.base`) and is listed by :func:`list_methods`.
"""

__version__ = "0.1.0.dev0"

from sparsefs.utils._registry import MethodInfo, get_method, list_methods

__all__ = ["MethodInfo", "__version__", "get_method", "list_methods"]
