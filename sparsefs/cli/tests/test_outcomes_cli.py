"""``select`` and ``compare`` with continuous and survival outcomes (issue #32).

Independent reference: the estimators fitted directly through the Python API on the same
table (the command line must give the same selection), and the harness run of the same spec.
"""

import json

import numpy as np
import pandas as pd
import pytest

from sparsefs.cli import main
from sparsefs.cli._main import meta_path
from sparsefs.datasets import make_planted_regression, make_planted_survival
from sparsefs.selection import LassoSelector, UnivariateScore


@pytest.fixture
def tables(tmp_path):
    r = make_planted_regression(n_samples=60, n_features=20, n_informative=3, effect=2.0,
                                random_state=0)
    s = make_planted_survival(n_samples=80, n_features=20, n_informative=3, effect=1.0,
                              random_state=0)
    cols = [f"g{j}" for j in range(20)]
    reg = pd.DataFrame(r.X, columns=cols).assign(response=r.y)
    reg.to_csv(tmp_path / "reg.csv", index=False)
    ages = pd.DataFrame(r.X, columns=cols).assign(age=np.rint(10 * r.y + 40).astype(int))
    ages.to_csv(tmp_path / "ages.csv", index=False)
    surv = pd.DataFrame(s.X, columns=cols).assign(days=s.y["time"],
                                                  dead=s.y["event"].astype(int))
    surv.to_csv(tmp_path / "surv.csv", index=False)
    return tmp_path, r, s


def test_select_continuous_target(tables, capsys):
    path, r, _ = tables
    out = path / "o.csv"
    code = main(["select", str(path / "reg.csv"), "--target", "response", "-m",
                 "univariate_score", "-k", "3", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(out)
    ref = UnivariateScore(n_features_to_select=3).fit(r.X, r.y)
    got = table.sort_values("index")
    np.testing.assert_allclose(got["score"].to_numpy(), ref.scores_)
    meta = json.loads(meta_path(out).read_text())
    assert meta["data"]["outcome"] == "regression"


def test_select_whole_number_target_with_continuous(tables, capsys):
    path, r, _ = tables
    out = path / "o.csv"
    code = main(["select", str(path / "ages.csv"), "--target", "age", "--continuous", "-m",
                 "lasso", "-k", "3", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    ages = np.rint(10 * r.y + 40).astype(int)
    ref = LassoSelector(n_features_to_select=3, target_type="regression").fit(r.X, ages)
    table = pd.read_csv(out)
    assert set(table.loc[table.selected, "index"]) == set(np.flatnonzero(ref.support_))


def test_select_survival_columns(tables, capsys):
    path, _, s = tables
    out = path / "o.csv"
    code = main(["select", str(path / "surv.csv"), "--time", "days", "--event", "dead", "-m",
                 "lasso", "-k", "3", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    ref = LassoSelector(n_features_to_select=3).fit(s.X, s.y)
    table = pd.read_csv(out)
    assert set(table.loc[table.selected, "index"]) == set(np.flatnonzero(ref.support_))


@pytest.mark.parametrize(("args", "message"), [
    (["--time", "days"], "needs both"),
    (["--time", "days", "--event", "dead", "--target", "g1"], "not both"),
])
def test_select_outcome_errors(tables, capsys, args, message):
    path, _, _ = tables
    code = main(["select", str(path / "surv.csv"), "-m", "lasso", "-k", "3", *args,
                 "--out", str(path / "o.csv")])
    assert code != 0 and message in capsys.readouterr().err


def test_select_class_only_method_names_the_alternatives(tables, capsys):
    path, _, _ = tables
    code = main(["select", str(path / "reg.csv"), "--target", "response", "-m", "fisher_score",
                 "-k", "3", "--out", str(path / "o.csv")])
    err = capsys.readouterr().err
    assert code != 0 and "accepts class labels" in err and "univariate_score" in err


def test_compare_regression_and_survival(tables, capsys):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    path, _, _ = tables
    code = main(["compare", str(path / "reg.csv"), "--target", "response", "--methods",
                 "univariate_score,variance", "--k", "1,3", "--cv", "3", "--no-figures",
                 "--out", str(path / "c1"), "--no-progress"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "Best r2 over k (ridge)" in out.out
    results = pd.read_csv(path / "c1" / "results.csv")
    assert {"r2", "rmse"} <= set(results.metric)
    code = main(["compare", str(path / "surv.csv"), "--time", "days", "--event", "dead",
                 "--methods", "univariate_score,lasso", "--k", "1,3", "--cv", "3",
                 "--no-figures", "--out", str(path / "c2"), "--no-progress"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "Best c_index over k (cox)" in out.out
    report = (path / "c2" / "report.md").read_text()
    assert "survival protocol" in report and "--time days --event dead" in report
