"""sparsefs: sparse feature selection for high-dimensional data.

Exact where the math allows, fast, and scikit-learn native. Every estimator follows one selection
contract (see :mod:`sparsefs.base`) and is listed by :func:`list_methods`.

``import sparsefs`` loads only the method registry (no numpy, scikit-learn or pandas); the
families (``sparsefs.selection``, ``sparsefs.classification``, ...) are imported when used.
"""

import os
import sys

__version__ = "0.1.0.dev0"
"""The version of sparsefs (PEP 440)."""


def _writable(path: str) -> bool:
    """Whether ``path`` (or, if missing, its first existing ancestor) accepts new files."""
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent
    return os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)


def _ensure_numba_cache_dir() -> None:
    """Give numba's ``cache=True`` somewhere to write when the install is read-only.

    numba caches compiled kernels in ``_kernels/__pycache__`` or else in the user cache
    (``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba``); when neither is writable (a read-only
    install with a read-only home, as in some containers) it raises ``RuntimeError`` when a
    kernel module is imported. Then ``NUMBA_CACHE_DIR`` is pointed to a folder in the temporary
    directory, unless the user set it.
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    kernels = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kernels")
    if _writable(os.path.join(kernels, "__pycache__")):
        return
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if _writable(os.path.join(xdg, "numba")):
        return
    import tempfile

    uid = getattr(os, "getuid", lambda: "user")()
    path = os.path.join(tempfile.gettempdir(), f"sparsefs-numba-cache-{uid}")
    os.environ["NUMBA_CACHE_DIR"] = path
    numba = sys.modules.get("numba")
    if numba is not None:  # already configured from the environment: update it too
        numba.config.CACHE_DIR = path


_ensure_numba_cache_dir()

from sparsefs.utils._registry import MethodInfo, get_method, list_methods  # noqa: E402

__all__ = ["MethodInfo", "__version__", "get_method", "list_methods"]
