"""Dask support: the per-feature methods on arrays larger than one machine's memory.

Everything that imports dask lives in this private package, and only its submodules import it:
:func:`is_dask_collection` looks at ``sys.modules``, and the dask implementations of the
array-type dispatch (:mod:`sparsefs._kernels.arrays`: the estimators' ``fit``, ``transform``,
``predict``, ``decision_function``, and the array operations) are registered here lazily
(:mod:`sparsefs._dask._dispatch`, loaded the first time a dask collection is dispatched), so
``import sparsefs`` never imports dask, and a process that never built a dask collection never
loads it. See ``docs/dask.md``.
"""

import sys

from sparsefs._kernels import arrays as _arrays

__all__ = ["is_dask_collection"]


def _register_dask() -> None:
    """The dask implementations of the array-type dispatch (:mod:`sparsefs._kernels.arrays`),
    registered the first time a dask collection is dispatched."""
    from sparsefs._dask import _dispatch  # noqa: F401  (registers on import)


_arrays.register_lazy("dask", _register_dask)


def is_dask_collection(obj) -> bool:
    """Whether ``obj`` is a dask collection (dask array, dataframe, bag, delayed), lazily.

    No dask collection can exist unless ``dask`` has been imported, so this is ``False``
    without importing anything when ``dask`` is not in ``sys.modules``.

    Parameters
    ----------
    obj : object

    Returns
    -------
    bool
    """
    if "dask" not in sys.modules:
        return False
    return _arrays.is_lazy(obj)
