"""Utilities: the method registry, result tables and survival targets.

:func:`scores_frame` (pandas and scikit-learn) and :func:`survival_target` (the structured
event / time array of a survival target, docs/outcomes.md) are imported on first access, so that
``import sparsefs`` and the command line's ``--help`` / ``--version`` stay fast.
"""

from typing import TYPE_CHECKING, Any

from sparsefs.utils._registry import MethodInfo, get_method, list_methods

if TYPE_CHECKING:
    from sparsefs.utils._results import scores_frame
    from sparsefs.utils._targets import survival_target

__all__ = ["MethodInfo", "get_method", "list_methods", "scores_frame", "survival_target"]

_LAZY = {"scores_frame": "sparsefs.utils._results", "survival_target": "sparsefs.utils._targets"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
