"""Report hooks under ``sparsefs.harness.hooks``."""

from types import SimpleNamespace

import numpy as np
import pytest

from sparsefs.harness.hooks.sparse_kmeans import _gap_figure


def test_gap_figure_is_saved_and_linked_beside_the_report(tmp_path):
    pytest.importorskip("matplotlib")
    outdir = tmp_path / "sparse_kmeans"
    outdir.mkdir()
    grid = np.array([5.0, 10, 20, 40])
    gap = SimpleNamespace(grid=grid, gap=np.array([0.2, 0.5, 0.6, 0.4]),
                          sd=np.full(4, 0.05), best=20.0)
    link = _gap_figure(gap, outdir)
    assert link == "sparse_kmeans/exp1_gap_curve.png"
    assert (outdir / "exp1_gap_curve.png").stat().st_size > 1000
