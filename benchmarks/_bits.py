"""Bit-for-bit records of results: one snapshot format and one record / compare command line
for the ``record_*_bits.py`` scripts (issue #34: a refactor shows that it changed no bit).

A snapshot is comparable with ``==`` and picklable: arrays as dtype + shape + bytes, floats
as their 8 bytes, sparse matrices by their CSR parts, dataclasses and k-means results by
their fields, fitted estimators by their public fitted attributes.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp


def snapshot(x):
    """A comparable, picklable snapshot of ``x``."""
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            return ("obj", [snapshot(v) for v in x.ravel().tolist()])
        return ("nd", str(x.dtype), x.shape, np.ascontiguousarray(x).tobytes())
    if sp.issparse(x):
        x = sp.csr_array(x)
        return ("sp", snapshot(x.data), snapshot(x.indices), snapshot(x.indptr), x.shape)
    if isinstance(x, (list, tuple)):
        return [snapshot(v) for v in x]
    if isinstance(x, dict):
        return {str(k): snapshot(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (float, np.floating)):
        return ("f", np.float64(x).tobytes())
    if isinstance(x, (bool, np.bool_, int, np.integer, str)) or x is None:
        return x.item() if isinstance(x, np.generic) else x
    if hasattr(x, "__dataclass_fields__"):  # KMeansResult among them
        return {k: snapshot(getattr(x, k)) for k in x.__dataclass_fields__}
    return ("repr", type(x).__name__)


def fitted(est) -> dict:
    """The public fitted attributes (``name_``) of an estimator, as snapshots."""
    return {k: snapshot(v) for k, v in sorted(vars(est).items())
            if k.endswith("_") and not k.startswith("_")}


def _paths(a, b, path="") -> list[str]:
    """Where two snapshots differ (the first few paths)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b))
                for d in _paths(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (u, v) in enumerate(zip(a, b)) for d in _paths(u, v, f"{path}[{i}]")]
    return [] if a == b else [path or "."]


def main(argv: list[str], record: Callable[[], dict], doc: str | None = None) -> int:
    """``record PATH``: write the record; ``compare PATH``: record again and demand equality
    with the one stored (exit 1 on any difference or case missing on one side)."""
    if len(argv) < 3 or argv[1] not in ("record", "compare"):
        print(doc or main.__doc__)
        return 2
    rec = record()
    if argv[1] == "record":
        with open(argv[2], "wb") as fh:
            pickle.dump(rec, fh)
        print(f"recorded {len(rec)} cases to {argv[2]}")
        return 0
    with open(argv[2], "rb") as fh:
        old = pickle.load(fh)
    bad = [k for k in old if k in rec and rec[k] != old[k]]
    missing = set(old) ^ set(rec)
    for k in bad[:20]:
        print("DIFFERS:", k, _paths(old[k], rec[k])[:5])
    if missing:
        print(f"{len(missing)} cases recorded on one side only")
    print(f"{len(old) - len(bad)} of {len(old)} cases bit-for-bit equal; {len(bad)} differ")
    return 1 if bad or missing else 0
