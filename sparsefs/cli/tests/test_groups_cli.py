"""``--groups COLUMN``: donor-level trust layer in ``select``, group-aware folds in ``compare``.

Independent references: the library selectors fitted with ``groups=`` in the test (whose own
tests compare them with scipy / statsmodels), and the h5ad written beside them read back.
"""

import json

import numpy as np
import pandas as pd
import pytest

from sparsefs.cli import main
from sparsefs.cli._main import meta_path
from sparsefs.datasets import make_multi_donor_counts
from sparsefs.selection import ErrorControlSelector, FisherScore, StabilitySelector


@pytest.fixture
def cells_csv(tmp_path):
    data = make_multi_donor_counts(n_genes=60, n_groups=2, design="nested", n_donors=8,
                                   cells_per_donor=(20, 40), n_markers=4, log_fc=3.0,
                                   random_state=0)
    frame = pd.DataFrame(data.X.toarray(), columns=data.feature_names)
    frame["donor"] = data.donors
    frame["condition"] = data.y
    path = tmp_path / "cells.csv"
    frame.to_csv(path, index=False)
    return path, data


def _select(path, out, *flags):
    return main(["select", str(path), "-t", "condition", "--groups", "donor", "--out",
                 str(out), *flags])


def test_select_fdr_with_groups_is_donor_level(cells_csv, tmp_path, capsys):
    path, data = cells_csv
    out = tmp_path / "genes.csv"
    assert _select(path, out, "-m", "fisher_score", "--fdr", "0.1") == 0, capsys.readouterr()
    assert "nested design, donor as the unit" in capsys.readouterr().out
    table = pd.read_csv(out).set_index("index").sort_index()
    X = data.X.toarray().astype(np.float64)  # what the CSV holds (float32 values, printed)
    ref = ErrorControlSelector(FisherScore(), level=0.1).fit(
        pd.read_csv(path).drop(columns=["donor", "condition"]).to_numpy(), data.y,
        groups=data.donors)
    assert X.shape[1] == len(table)
    np.testing.assert_allclose(table["pvalue"], ref.pvalues_, rtol=1e-9)
    np.testing.assert_array_equal(table["selected"], ref.support_)
    assert "donor" not in set(table["feature"])  # the groups column is not a feature
    meta = json.loads(meta_path(out).read_text())
    assert meta["groups"] == {"column": "donor", "design": "nested", "n_groups": 8}
    assert meta["error_control"]["pvalues"] == "pseudobulk-anova"


def test_select_stability_with_groups(cells_csv, tmp_path, capsys):
    path, data = cells_csv
    out = tmp_path / "stable.csv"
    code = _select(path, out, "-m", "fisher_score", "-k", "8", "--stability", "10")
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(out).set_index("index").sort_index()
    X = pd.read_csv(path).drop(columns=["donor", "condition"]).to_numpy()
    ref = StabilitySelector(FisherScore(8), n_resamples=10, random_state=0).fit(
        X, data.y, groups=data.donors)
    np.testing.assert_allclose(table["frequency"], ref.frequencies_)


def test_groups_need_the_trust_layer(cells_csv, tmp_path, capsys):
    path, _ = cells_csv
    assert _select(path, tmp_path / "x.csv", "-m", "fisher_score", "-k", "5") != 0
    err = capsys.readouterr().err
    assert "--groups donor" in err and "--fdr" in err
    code = main(["select", "default", "--groups", "donor", "-m", "fisher_score", "--fdr",
                 "0.1", "--out", str(tmp_path / "y.csv")])
    assert code != 0 and "apply to data files only" in capsys.readouterr().err


def test_select_write_h5ad_with_groups(tmp_path, capsys):
    pytest.importorskip("anndata")
    data = make_multi_donor_counts(n_genes=60, n_groups=3, design="crossed", n_donors=5,
                                   cells_per_donor=(30, 50), n_markers=4, log_fc=3.0,
                                   random_state=1)
    source = tmp_path / "cells.h5ad"
    data.to_anndata().write_h5ad(source)
    out, h5 = tmp_path / "g.csv", tmp_path / "out.h5ad"
    code = main(["select", str(source), "-t", "group", "--groups", "donor", "-m",
                 "error_control", "--out", str(out), "--write-h5ad", str(h5)])
    assert code == 0, capsys.readouterr().err
    import anndata

    back = anndata.read_h5ad(h5)
    assert back.uns["sparsefs"]["params"]["design"] == "crossed"
    assert back.uns["sparsefs"]["params"]["sample_key"] == "donor"
    ref = ErrorControlSelector().fit(data.X, data.y, groups=data.donors)
    np.testing.assert_allclose(back.var["sparsefs_pval"], ref.pvalues_, rtol=1e-9)


def test_compare_with_groups(cells_csv, tmp_path, capsys):
    path, _ = cells_csv
    out = tmp_path / "cmp"
    code = main(["compare", str(path), "--target", "condition", "--groups", "donor",
                 "--methods", "fisher_score", "--k", "2,4", "--cv", "4", "--estimators",
                 "knn", "--out", str(out), "--no-figures"])
    assert code == 0, capsys.readouterr().err
    results = pd.read_csv(out / "results.csv")
    assert set(results["fold"]) == {0, 1, 2, 3}
    report = (out / "report.md").read_text()
    assert "--groups donor" in report


@pytest.fixture
def donor_outcome_csv(tmp_path):
    """Cells of 9 donors with a donor attribute (age), a target varying within donors
    (pseudotime) and a donor-level survival target."""
    rng = np.random.default_rng(0)
    n_donors, p = 9, 12
    g = np.repeat(np.arange(n_donors), rng.integers(8, 14, size=n_donors))
    age = rng.uniform(20, 80, size=n_donors)
    offsets = 0.8 * rng.normal(size=(n_donors, p))
    offsets[:, 0] += (age - 50) / 15
    X = offsets[g] + rng.normal(size=(g.shape[0], p))
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(p)])
    frame["donor"] = [f"d{k}" for k in g]
    frame["age"] = age[g]
    path = tmp_path / "donor_outcomes.csv"
    frame.to_csv(path, index=False)
    varying = frame.drop(columns=["age"]).assign(pseudotime=age[g] + rng.normal(size=g.shape[0]))
    varying.to_csv(tmp_path / "pseudotime.csv", index=False)
    return path, X, g, age


def test_select_continuous_target_with_groups(donor_outcome_csv, tmp_path, capsys):
    """--groups with a continuous donor attribute: the F test of the donor means (scikit-learn's
    f_regression on hand-computed means); a target varying within donors is refused."""
    from sklearn.feature_selection import f_regression

    path, X, g, age = donor_outcome_csv
    out = tmp_path / "genes.csv"
    code = main(["select", str(path), "-t", "age", "--groups", "donor", "-m",
                 "univariate_score", "--fdr", "0.1", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert "nested design, donor as the unit" in capsys.readouterr().out
    table = pd.read_csv(out).set_index("index").sort_index()
    means = np.array([X[g == k].mean(axis=0) for k in range(9)])
    np.testing.assert_allclose(table["pvalue"], f_regression(means, age)[1], rtol=1e-6)
    meta = json.loads(meta_path(out).read_text())
    assert meta["groups"] == {"column": "donor", "design": "nested", "n_groups": 9}
    assert meta["error_control"]["pvalues"] == "pseudobulk-f"
    assert meta["data"]["outcome"] == "regression"
    code = main(["select", str(path.with_name("pseudotime.csv")), "-t", "pseudotime",
                 "--groups", "donor", "-m",
                 "error_control", "--out", str(tmp_path / "bad.csv")])
    err = capsys.readouterr().err
    assert code != 0 and "varies within donors" in err and "StabilitySelector" in err


def test_compare_regression_with_groups(donor_outcome_csv, tmp_path, capsys):
    path, *_ = donor_outcome_csv
    out = tmp_path / "cmp"
    code = main(["compare", str(path), "--target", "age", "--groups", "donor", "--methods",
                 "univariate_score", "--k", "1,3", "--cv", "3", "--out", str(out),
                 "--no-figures", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    results = pd.read_csv(out / "results.csv")
    assert {"r2", "rmse"} <= set(results.metric) and set(results["fold"]) == {0, 1, 2}
    assert "--groups donor" in (out / "report.md").read_text()
