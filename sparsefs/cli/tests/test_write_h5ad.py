"""``sparsefs select DATA.h5ad --write-h5ad OUT.h5ad`` (#22).

Independent reference: the same selection by ``sparsefs.tl.select`` on the AnnData object, and
the input file's bytes (never touched).
"""

import hashlib

import numpy as np
import pandas as pd
import pytest

anndata = pytest.importorskip("anndata")

from sparsefs.cli import main  # noqa: E402


def _h5ad(path, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(["b", "a", "c"], 20)
    X = rng.poisson(0.7, (60, 25)).astype(np.float32)
    for j, g in enumerate(["b", "a", "c"]):
        X[y == g, j] += 3
    obs = pd.DataFrame({"cell_type": pd.Categorical(y)}, index=[f"c{i}" for i in range(60)])
    var = pd.DataFrame(index=[f"g{j}" for j in range(25)])
    anndata.AnnData(X, obs=obs, var=var).write_h5ad(path)
    return path


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_write_h5ad_adds_the_results_and_never_touches_the_input(tmp_path):
    src = _h5ad(tmp_path / "cells.h5ad")
    before = _digest(src)
    out = tmp_path / "annotated.h5ad"
    rc = main(["select", str(src), "--target", "cell_type", "-m", "fisher_score", "-k", "3",
               "--out", str(tmp_path / "sel.csv"), "--write-h5ad", str(out)])
    assert rc == 0
    assert _digest(src) == before
    got = anndata.read_h5ad(out)
    import sparsefs.tl

    ref = anndata.read_h5ad(src)
    sparsefs.tl.select(ref, "fisher_score", groupby="cell_type", n_features=3)
    np.testing.assert_allclose(got.var["sparsefs_score"], ref.var["sparsefs_score"])
    np.testing.assert_array_equal(got.var["sparsefs_selected"], ref.var["sparsefs_selected"])
    assert set(np.flatnonzero(got.var["sparsefs_selected"])) == {0, 1, 2}
    assert got.uns["sparsefs"]["params"]["method"] == "fisher_score"
    table = pd.read_csv(tmp_path / "sel.csv")
    assert len(table) == 25
    assert not list(tmp_path.glob(".sparsefs-*"))  # no temporary file left behind


@pytest.mark.parametrize(
    ("target", "message"),
    [("same", "input file"), ("x.csv", "must end in .h5ad"), ("nodir/x.h5ad", "does not exist")],
)
def test_write_h5ad_bad_paths_fail_before_the_fit(tmp_path, capsys, target, message):
    src = _h5ad(tmp_path / "cells.h5ad")
    before = _digest(src)
    path = str(src) if target == "same" else str(tmp_path / target)
    rc = main(["select", str(src), "--target", "cell_type", "-m", "fisher_score", "-k", "3",
               "--out", str(tmp_path / "sel.csv"), "--write-h5ad", path])
    assert rc != 0
    assert message in capsys.readouterr().err
    assert _digest(src) == before
    assert not (tmp_path / "sel.csv").exists()


def test_write_h5ad_needs_h5ad_data(tmp_path, capsys):
    rc = main(["select", "default", "-m", "fisher_score", "-k", "3",
               "--out", str(tmp_path / "sel.csv"), "--write-h5ad", str(tmp_path / "o.h5ad")])
    assert rc != 0
    assert "needs a .h5ad DATA file" in capsys.readouterr().err
