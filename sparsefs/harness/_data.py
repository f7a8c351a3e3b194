"""Turn a :class:`DataSpec` into a :class:`~sparsefs.datasets.Dataset`."""

from __future__ import annotations

import inspect

import numpy as np

from sparsefs.datasets import ASU_DATASETS, Dataset, fetch_asu, load, load_default
from sparsefs.harness._spec import DataSpec
from sparsefs.utils._factory import import_object

__all__ = ["MissingDataError", "load_dataset"]


class MissingDataError(FileNotFoundError):
    """A data set named by a spec is not available locally."""


def load_dataset(spec: DataSpec, *, seed: int | None = None) -> Dataset:
    """Load or generate the data set described by ``spec``.

    Parameters
    ----------
    spec : DataSpec
    seed : int, optional
        ``random_state`` for generators (and ``load_default``) when ``spec.params`` does not
        fix one.

    Returns
    -------
    Dataset
        With ``name`` replaced by ``spec.display``.

    Raises
    ------
    MissingDataError
        If an ASU set or a file is not found locally.
    ValueError
        For an unknown name or generator.
    """
    params = dict(spec.params)
    if spec.name is not None:
        if spec.name == "default":
            params.setdefault("random_state", 0 if seed is None else seed)
            ds = load_default(**params)
        elif spec.name in ASU_DATASETS:
            download = bool(params.pop("download", False))
            if params:
                raise ValueError(f"ASU data set {spec.name!r} takes only 'download' in params.")
            try:
                ds = fetch_asu(spec.name, download=download)
            except FileNotFoundError as exc:
                raise MissingDataError(
                    f"data set {spec.name!r} is not available locally: set SPARSEFS_DATA to a "
                    "directory holding it, or fetch it once with "
                    f"sparsefs.datasets.fetch_asu({spec.name!r})"
                ) from exc
        else:
            known = ", ".join(["default", *ASU_DATASETS])
            raise ValueError(f"unknown data set name {spec.name!r}; known names: {known}.")
    elif spec.path is not None:
        try:
            ds = load(spec.path, target=spec.target, transpose=spec.transpose,
                      time=spec.time, event=spec.event, groups=spec.groups, **params)
        except FileNotFoundError as exc:
            raise MissingDataError(f"data file {spec.path!r} does not exist") from exc
    elif spec.generator is not None:
        import sparsefs.datasets as datasets

        func = getattr(datasets, spec.generator, None)
        if func is None or not spec.generator.startswith("make_"):
            known = ", ".join(n for n in datasets.__all__ if n.startswith("make_"))
            raise ValueError(f"unknown generator {spec.generator!r}; known: {known}.")
        if "random_state" in inspect.signature(func).parameters:
            params.setdefault("random_state", seed)
        ds = func(**params)
    else:
        func = import_object(str(spec.loader))
        try:
            out = func(**params)
        except FileNotFoundError as exc:
            if isinstance(exc, MissingDataError):
                raise
            # A custom loader signals absent local data the standard way; the runner's
            # ``missing_data="skip"`` must treat it like a missing ASU set or file.
            raise MissingDataError(f"loader {spec.loader!r}: {exc}") from exc
        if isinstance(out, tuple):
            X, y = out
            p = X.shape[1]
            out = Dataset(X=X, y=None if y is None else np.asarray(y),
                          feature_names=[f"x{j}" for j in range(p)], support=None,
                          name=spec.display)
        if not isinstance(out, Dataset):
            raise TypeError(f"loader {spec.loader!r} returned {type(out).__name__}; expected a "
                            "Dataset or (X, y).")
        ds = out
    if spec.groups is not None and spec.path is None:
        raise ValueError(
            f"data set {spec.display!r}: groups={spec.groups!r} names a column of a data file; "
            "a generator or loader gives its groups in Dataset.groups."
        )
    return _renamed(ds, spec.display)


def _renamed(ds: Dataset, name: str) -> Dataset:
    if ds.name == name:
        return ds
    return Dataset(X=ds.X, y=ds.y, feature_names=ds.feature_names, support=ds.support,
                   name=name, description=ds.description, groups=ds.groups)
