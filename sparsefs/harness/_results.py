"""The results of a run: one tidy table plus metadata, saved as CSV or Parquet."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sparsefs.utils._load import LoadMonitor  # the one load monitor (re-exported)

__all__ = ["LoadMonitor", "Reproduction", "Results", "environment_metadata"]

SUPPORT_COLUMNS = ("experiment", "dataset", "method", "fold", "k", "feature", "score", "rank",
                   "selected")
_META_KEY = b"sparsefs"


# --------------------------------------------------------------------------------------------
# environment
# --------------------------------------------------------------------------------------------


def _git_revision() -> dict[str, Any] | None:
    """The git revision of the sparsefs source tree (None when not a checkout)."""
    import sparsefs

    root = Path(sparsefs.__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, capture_output=True, text=True, timeout=10,
                               check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return {"revision": rev, "dirty": bool(dirty)}


def environment_metadata() -> dict[str, Any]:
    """Package versions, Python, platform and the git revision of sparsefs."""
    import joblib
    import scipy
    import sklearn

    import sparsefs

    versions = {
        "sparsefs": sparsefs.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "pandas": pd.__version__,
        "joblib": joblib.__version__,
    }
    for optional in ("imblearn", "matplotlib", "pyarrow"):
        mod = sys.modules.get(optional)
        if mod is not None:
            versions[optional] = getattr(mod, "__version__", "?")
    return {
        "versions": versions,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "git": _git_revision(),
    }


def utc_now() -> str:
    """The current UTC time, ISO 8601, seconds."""
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


#: The headline metric of each protocol when the spec's ``report`` table names none.
_DEFAULT_HEADLINE = {"supervised": "accuracy", "unsupervised": "acc", "clustering": "cer",
                     "regression": "r2", "survival": "c_index"}


@dataclass
class Results:
    """The outcome of :func:`sparsefs.harness.run`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (experiment, dataset, method, fold, run, k, estimator, metric): columns
        ``experiment, dataset, method, fold, run, k, estimator, metric, value, fit_time``.
        ``estimator == "selection"`` rows describe the selection itself (``fit_time``,
        ``n_selected`` and, with a known true support, ``relevant_kept``, ``noise_kept``,
        ``support_precision``/``recall``/``f1``). ``fit_time`` is the selector's fit time (s)
        for the features of that row.
    meta : dict
        Spec (and its hash), versions, git revision, start/end time, machine load, n_jobs,
        data sets (shapes) and skipped data sets.
    supports : pandas.DataFrame or None
        With ``record_support``: per fold, every feature's score, rank and selection.
    predictions : dict or None
        With ``keep_predictions``: ``(dataset, method, estimator, k) -> (y_true, scores)``
        pooled over the test folds (not saved to disk).
    """

    table: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)
    supports: pd.DataFrame | None = None
    predictions: dict[tuple, tuple[np.ndarray, np.ndarray]] | None = None

    def headline(self) -> tuple[str, str, int | None]:
        """The report's headline: ``(metric, estimator, k_max)`` from the spec's ``report``
        table, else the protocol's usual metric and the first downstream estimator."""
        spec = self.meta.get("spec", {})
        rep = spec.get("report") or {}
        protocol = spec.get("protocol", "supervised")
        metric = rep.get("metric") or _DEFAULT_HEADLINE[protocol]
        estimators = [e["name"] for e in spec.get("estimators", [])] or ["svm"]
        estimator = rep.get("estimator") or estimators[0]
        return metric, estimator, rep.get("k_max")

    def __repr__(self) -> str:
        t = self.table
        return (
            f"Results({len(t)} rows; datasets={sorted(t['dataset'].unique().tolist())}, "
            f"methods={sorted(t['method'].unique().tolist())})"
        )

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the table (``.csv``, ``.csv.gz`` or ``.parquet``) and its metadata.

        CSV: the metadata goes to a sidecar ``<name>.meta.json`` and the supports (when
        recorded) to ``<name>.supports.csv[.gz]``. Parquet: the metadata is stored in the
        file's schema metadata (key ``sparsefs``) *and* the sidecar; supports to
        ``<name>.supports.parquet``.

        Returns
        -------
        pathlib.Path
            The table's path.
        """
        path = Path(path)
        base, suffix = _split_suffix(path)
        meta_text = json.dumps(self.meta, indent=1, default=str)
        if suffix.startswith(".csv"):
            self.table.to_csv(path, index=False)
            if self.supports is not None:
                self.supports.to_csv(path.with_name(f"{base}.supports{suffix}"), index=False)
        else:
            _write_parquet(self.table, path, meta_text)
            if self.supports is not None:
                _write_parquet(self.supports, path.with_name(f"{base}.supports.parquet"),
                               meta_text)
        path.with_name(f"{base}.meta.json").write_text(meta_text + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Results:
        """Read what :meth:`save` wrote (table, metadata, supports when present)."""
        path = Path(path)
        base, suffix = _split_suffix(path)
        meta: dict[str, Any] = {}
        sidecar = path.with_name(f"{base}.meta.json")
        supports = None
        if suffix.startswith(".csv"):
            table = pd.read_csv(path)
            sup = path.with_name(f"{base}.supports{suffix}")
            if sup.exists():
                supports = pd.read_csv(sup)
        else:
            import pyarrow.parquet as pq

            pq_table = pq.read_table(path)
            raw = (pq_table.schema.metadata or {}).get(_META_KEY)
            if raw:
                meta = json.loads(raw)
            table = pq_table.to_pandas()
            sup = path.with_name(f"{base}.supports.parquet")
            if sup.exists():
                supports = pd.read_parquet(sup)
        if not meta and sidecar.exists():
            meta = json.loads(sidecar.read_text(encoding="utf-8"))
        return cls(table=table, meta=meta, supports=supports)


def _split_suffix(path: Path) -> tuple[str, str]:
    """(base name, suffix) for the supported result files."""
    name = path.name
    for suffix in (".csv.gz", ".csv", ".parquet"):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], suffix
    raise ValueError(f"{path}: results are saved as .csv, .csv.gz or .parquet.")


def _write_parquet(frame: pd.DataFrame, path: Path, meta_text: str) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(
            'Writing Parquet needs the optional dependency pyarrow: pip install "sparsefs[parquet]"'
        ) from exc
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = dict(table.schema.metadata or {})
    metadata[_META_KEY] = meta_text.encode()
    pq.write_table(table.replace_schema_metadata(metadata), path)


@dataclass
class Reproduction:
    """A finished reproduction run.

    Attributes
    ----------
    spec : ReproductionSpec
        As run (reduced when ``quick``).
    results : list of Results
        One per experiment, in the spec's order.
    quick : bool
    """

    spec: ReproductionSpec  # noqa: F821 - sparsefs.harness._spec (annotation only)
    results: list[Results]
    quick: bool = False

    def combined_table(self):
        """All experiments' tables in one DataFrame (the ``experiment`` column tells them
        apart)."""
        import pandas as pd

        return pd.concat([r.table for r in self.results], ignore_index=True)
