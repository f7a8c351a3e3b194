"""Dask support: the per-feature methods on arrays larger than one machine's memory.

Everything that imports dask lives in this private package, and only its submodules import it:
:func:`is_dask_collection` (used by :meth:`sparsefs.base._SparseEstimatorBase.fit`) looks at
``sys.modules``, so ``import sparsefs`` never imports dask, and a process that never built a
dask collection never loads it. See ``docs/dask.md``.
"""

import sys

__all__ = ["is_dask_collection"]


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
    from dask.base import is_dask_collection as _is_collection

    return bool(_is_collection(obj))
