"""The one place where sparsefs touches private scikit-learn API.

scikit-learn's parameter-validation helpers are private but stable since 1.2 and are what
scikit-learn-contrib projects use; keeping them behind this shim means a future rename is fixed in
one file. Tested against the minimum (1.6) and latest scikit-learn.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    Hidden,
    Interval,
    InvalidParameterError,
    RealNotInt,
    StrOptions,
)

__all__ = [
    "Hidden", "Interval", "InvalidParameterError", "RealNotInt", "StrOptions", "_fit_context",
]
