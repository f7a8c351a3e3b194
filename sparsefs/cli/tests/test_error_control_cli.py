"""``sparsefs select --fdr Q`` / ``--fwer A``: p-value and q-value columns, error-controlled
selection.

Independent references: scipy's ``false_discovery_control`` and scikit-learn's ``f_classif``
(the F-test p-values of the Fisher score), and the library selectors (``ErrorControlSelector``,
``KnockoffSelector``) with the same seed, computed in the test.
"""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import false_discovery_control
from sklearn.feature_selection import f_classif

from sparsefs.cli import main
from sparsefs.cli.tests.conftest import write_expression_csv
from sparsefs.selection import KnockoffSelector


@pytest.fixture
def csv_file(tmp_path):
    return write_expression_csv(tmp_path, 30, 40, {7: 2.0, 2: -1.5})


def _select(path, out, *flags):
    return main(["select", str(path), "-t", "diagnosis", "--out", str(out), *flags])


def test_fdr_adds_pvalues_and_bh_qvalues(csv_file, tmp_path, capsys):
    path, X, y = csv_file
    out = tmp_path / "genes.csv"
    assert _select(path, out, "-m", "fisher_score", "--fdr", "0.05") == 0, capsys.readouterr()
    table = pd.read_csv(out).set_index("index").sort_index()
    p = f_classif(X, y)[1]
    np.testing.assert_allclose(table["pvalue"], p, rtol=1e-9)
    np.testing.assert_allclose(table["qvalue"], false_discovery_control(p), rtol=1e-9)
    np.testing.assert_array_equal(table["selected"], table["qvalue"] <= 0.05)
    assert {"gene7", "gene2"} <= set(table.loc[table["selected"], "feature"])
    meta = json.loads(out.with_name(out.name + ".meta.json").read_text())
    assert meta["error_control"] == {"rate": "FDR", "level": 0.05, "procedure": "bh",
                                     "pvalues": "estimator", "n_permutations": 0,
                                     "n_selected": int(table["selected"].sum())}
    # a method with p-values shows them even without --fdr (q-values: BH)
    plain = tmp_path / "plain.csv"
    assert _select(path, plain, "-m", "fisher_score", "-k", "5") == 0
    t2 = pd.read_csv(plain).set_index("index").sort_index()
    np.testing.assert_allclose(t2["qvalue"], false_discovery_control(p), rtol=1e-9)
    assert t2["selected"].sum() == 5


def test_fwer_with_permutations_of_any_method(csv_file, tmp_path, capsys):
    path, _, _ = csv_file
    out = tmp_path / "g.json"
    code = _select(path, out, "-m", "sparse_centers", "--fwer", "0.05", "--correction",
                   "bonferroni", "--permutations", "999", "--seed", "1")
    assert code == 0, capsys.readouterr().err
    rows = pd.DataFrame(json.loads(out.read_text()))
    assert {"pvalue", "qvalue", "method_score"} <= set(rows.columns)
    assert rows["pvalue"].min() == pytest.approx(1 / 1000)
    np.testing.assert_allclose(rows["qvalue"], np.minimum(1, 40 * rows["pvalue"]))
    assert set(rows.loc[rows["selected"], "feature"]) == {"gene7", "gene2"}
    meta = json.loads(out.with_name(out.name + ".meta.json").read_text())
    assert meta["error_control"]["pvalues"] == "permutation"
    assert meta["error_control"]["n_permutations"] == 999


def test_fdr_on_knockoffs_sets_their_level(csv_file, tmp_path, capsys):
    path, X, y = csv_file
    out = tmp_path / "k.csv"
    assert _select(path, out, "-m", "knockoffs", "--fdr", "0.5", "--seed", "2") == 0
    table = pd.read_csv(out).set_index("index").sort_index()
    ref = KnockoffSelector(fdr=0.5, random_state=2).fit(X, y)
    np.testing.assert_allclose(table["knockoff_statistic"], ref.statistics_[0])
    np.testing.assert_array_equal(table["selected"], ref.support_)
    meta = json.loads(out.with_name(out.name + ".meta.json").read_text())
    assert meta["error_control"]["procedure"] == "knockoff+"
    assert meta["error_control"]["level"] == 0.5


@pytest.mark.parametrize("flags, message", [
    (["-m", "fisher_score", "--fdr", "0.1", "--fwer", "0.1"], "give one"),
    (["-m", "fisher_score", "--correction", "by"], "needs --fdr or --fwer"),
    (["-m", "fisher_score", "--fdr", "0.1", "--correction", "holm"], "use it with --fwer"),
    (["-m", "knockoffs", "--fwer", "0.1"], "FDR only"),
    (["-m", "fisher_score", "--fdr", "1.5"], "level in"),
])
def test_usage_errors(csv_file, tmp_path, capsys, flags, message):
    path, _, _ = csv_file
    try:
        code = _select(path, tmp_path / "x.csv", *flags)
    except SystemExit as exc:  # argparse type errors
        code = exc.code
    assert code != 0
    assert message in capsys.readouterr().err
