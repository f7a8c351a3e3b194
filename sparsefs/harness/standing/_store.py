"""Stored results of the standing benchmarks: one compressed JSON file per (benchmark, data set),
one record per method (a "cell"), rewritten atomically after every cell.

A record is ``{"hash", "status", "message", "result", "meta"}``: ``status`` is ``ok``,
``budget`` (stopped at the time budget: "not run in budget"), ``error`` (the fit raised:
the message says what) or ``missing`` (a peer whose package is not installed). The run skips
a cell whose stored hash equals the spec's (:meth:`StandingSpec.cell_hash`), so an
interrupted run resumes where it stopped and a second run computes nothing.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["STATUSES", "ResultStore"]

STATUSES: tuple[str, ...] = ("ok", "budget", "error", "missing")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


class ResultStore:
    """The stored cells of one benchmark under ``root`` (``<root>/<data set>.json.gz``).

    Parameters
    ----------
    root : path
        E.g. ``docs/standing/results/microarray``; created on the first write.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._cache: dict[str, dict[str, Any]] = {}

    def path(self, dataset: str) -> Path:
        """The file of one data set."""
        return self.root / f"{_slug(dataset)}.json.gz"

    def _load(self, dataset: str) -> dict[str, Any]:
        if dataset not in self._cache:
            p = self.path(dataset)
            if p.is_file():
                with gzip.open(p, "rt", encoding="utf-8") as fh:
                    doc = json.load(fh)
            else:
                doc = {"dataset": dataset, "cells": {}}
            self._cache[dataset] = doc
        return self._cache[dataset]

    def get(self, dataset: str, method: str) -> dict[str, Any] | None:
        """The stored record of a cell, or ``None``."""
        return self._load(dataset)["cells"].get(method)

    def is_current(self, dataset: str, method: str, cell_hash: str) -> bool:
        """Whether a record with this hash is stored (the cell need not be recomputed)."""
        rec = self.get(dataset, method)
        return rec is not None and rec.get("hash") == cell_hash

    def put(self, dataset: str, method: str, record: dict[str, Any]) -> None:
        """Store one cell and rewrite the data set's file atomically."""
        if record.get("status") not in STATUSES:
            raise ValueError(f"record status {record.get('status')!r} not in {STATUSES}.")
        doc = self._load(dataset)
        doc["cells"][method] = record
        self._write(dataset, doc)

    def drop(self, dataset: str, keep: set[str]) -> list[str]:
        """Remove the records of methods not in ``keep`` (methods left out of the config);
        returns their labels."""
        doc = self._load(dataset)
        gone = sorted(set(doc["cells"]) - keep)
        if gone:
            for m in gone:
                del doc["cells"][m]
            self._write(dataset, doc)
        return gone

    def _write(self, dataset: str, doc: dict[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        target = self.path(dataset)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".json.gz")
        try:
            with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                                            compresslevel=9) as fh:
                fh.write(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode())
            os.chmod(tmp, 0o644)  # mkstemp's 0600 would make the committed files private
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def records(self, dataset: str) -> dict[str, dict[str, Any]]:
        """Every stored cell of a data set (method -> record)."""
        return dict(self._load(dataset)["cells"])

    def log_run(self, entry: dict[str, Any]) -> None:
        """Append one run's summary (dates, wall time, cells computed, load) to
        ``runs.json`` (the page's *How it was run*)."""
        self.root.mkdir(parents=True, exist_ok=True)
        runs = self.runs()
        runs.append(entry)
        path = self.root / "runs.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)

    def runs(self) -> list[dict[str, Any]]:
        """The logged runs, oldest first."""
        path = self.root / "runs.json"
        if not path.is_file():
            return []
        return json.loads(path.read_text(encoding="utf-8"))

    def datasets(self) -> list[str]:
        """The data sets with a file (by the label stored inside)."""
        if not self.root.is_dir():
            return []
        out = []
        for p in sorted(self.root.glob("*.json.gz")):
            with gzip.open(p, "rt", encoding="utf-8") as fh:
                out.append(json.load(fh)["dataset"])
        return out
