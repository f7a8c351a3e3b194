"""Fixtures of the harness tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparsefs.datasets._asu import shared_data_dir


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Never touch the user's ~/.cache/sparsefs."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg_cache")))


@pytest.fixture
def shared_data(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shared real-data directory, exported as SPARSEFS_DATA; skip when absent."""
    path = shared_data_dir()
    if path is None:
        pytest.skip("real data not available: set SPARSEFS_DATA to a directory holding the ASU "
                    ".mat files (or keep ../shared/data next to the repository)")
    monkeypatch.setenv("SPARSEFS_DATA", str(path))
    return path
