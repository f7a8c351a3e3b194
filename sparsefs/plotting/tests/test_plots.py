"""Plots on the Agg backend: inspect the artists, never show."""

import sys

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PolyCollection
from sklearn.metrics import roc_auc_score

from sparsefs.plotting import (
    plot_critical_difference,
    plot_cv_curve,
    plot_feature_scores,
    plot_gap_curve,
    plot_metric_vs_k,
    plot_roc_curves,
    report_figures,
)
from sparsefs.plotting._plots import _cliques

COLS = ["experiment", "dataset", "method", "fold", "run", "k", "estimator", "metric", "value",
        "fit_time"]


@pytest.fixture
def table():
    rows = []
    for f in range(3):
        for k in (1, 2, 4):
            rows.append(("e", "A", "m1", f, 0, k, "svm", "accuracy", 0.5 + 0.1 * k + 0.01 * f, 0))
            rows.append(("e", "A", "m2", f, 0, k, "svm", "accuracy", 0.6 + 0.01 * f, 0))
        rows.append(("e", "A", "all", f, 0, 50, "svm", "accuracy", 0.7, 0))
        rows.append(("e", "B", "m1", f, 0, 1, "svm", "accuracy", 0.4, 0))
    return pd.DataFrame(rows, columns=COLS)


def test_metric_vs_k_lines_bands_and_baselines(table):
    _fig, ax = plt.subplots()
    out = plot_metric_vs_k(table, "accuracy", dataset="A", ax=ax)
    assert out is ax
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert labels == ["m1", "m2", "all (k = 50)"]
    m1 = ax.get_lines()[0]
    assert list(m1.get_xdata()) == [1, 2, 4]
    assert m1.get_ydata() == pytest.approx([0.61, 0.71, 0.91])
    assert ax.get_lines()[2].get_linestyle() == "--"
    assert len([c for c in ax.collections if isinstance(c, PolyCollection)]) == 2
    assert ax.get_xlabel() == "number of selected features k" and ax.get_ylabel() == "accuracy"
    ax2 = plot_metric_vs_k(table, dataset="A", methods=["m2"], show_sd=False, ax=plt.figure().gca())
    assert len(ax2.get_lines()) == 1 and not ax2.collections


def test_metric_vs_k_errors_and_gca(table):
    with pytest.raises(ValueError, match="several data sets"):
        plot_metric_vs_k(table)
    with pytest.raises(ValueError, match="no rows"):
        plot_metric_vs_k(table, "nmi", dataset="A")
    with pytest.raises(ValueError, match="not in the results"):
        plot_metric_vs_k(table, dataset="A", methods=["zz"])
    with pytest.raises(TypeError):
        plot_metric_vs_k([1, 2])
    plt.figure()
    assert plot_metric_vs_k(table, dataset="B") is plt.gca()


def test_roc_curves_binary_and_multiclass():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 20)
    s = y + rng.normal(size=40)
    ax = plot_roc_curves(y, {"a": s, "b": -s}, ax=plt.figure().gca())
    lines = ax.get_lines()
    assert len(lines) == 3  # two curves and the chance diagonal
    assert f"{roc_auc_score(y, s):.3f}" in lines[0].get_label()
    y3 = np.repeat([0, 1, 2], 10)
    scores = np.eye(3)[y3] + rng.normal(scale=0.5, size=(30, 3))
    scores[:, 2] = np.nan  # a class the model never saw is left out
    ax = plot_roc_curves(y3, scores, label="model", ax=plt.figure().gca())
    assert ax.get_lines()[0].get_label().startswith("model (AUC = ")
    assert np.all(np.isfinite(ax.get_lines()[0].get_xdata()))


def test_cliques():
    ranks = np.array([1.0, 1.5, 2.0, 3.5, 3.8])
    assert _cliques(ranks, 1.1) == [(0, 2), (3, 4)]
    assert _cliques(ranks, 0.1) == []
    assert _cliques(ranks, 10) == [(0, 4)]


def test_critical_difference_diagram():
    ranks = {"c": 3.5, "a": 1.0, "b": 1.5, "d": 3.8}
    ax = plot_critical_difference(ranks, 1.1, ax=plt.figure().gca())
    names = [t.get_text() for t in ax.texts if t.get_gid() == "method"]
    assert names == ["a (1.00)", "b (1.50)", "c (3.50)", "d (3.80)"]
    cliques = [c for c in ax.collections if isinstance(c, LineCollection)
               and c.get_gid() == "clique"]
    assert len(cliques) == 2
    assert any(t.get_text() == "CD = 1.10" for t in ax.texts)
    with pytest.raises(ValueError, match="at least 2"):
        plot_critical_difference({"a": 1.0}, 1.0, ax=plt.figure().gca())


def test_feature_scores_from_estimator_and_arrays():
    from sparsefs.selection import FisherScore

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 12))
    y = np.repeat([0, 1], 20)
    X[:, 3] += 2 * y
    est = FisherScore(n_features_to_select=2).fit(X, y)
    truth = np.zeros(12, bool)
    truth[3] = True
    ax = plot_feature_scores(est, true_support=truth, ax=plt.figure().gca())
    stems = [c for c in ax.collections if c.get_gid() == "scores"]
    assert {c.get_label() for c in stems} == {"selected", "not selected"}
    selected = next(c for c in stems if c.get_label() == "selected")
    assert len(selected.get_segments()) == 2
    assert [ln for ln in ax.get_lines() if ln.get_gid() == "truth"]
    scores = np.array([np.inf, 1.0, 3.0, 2.0])
    ax = plot_feature_scores(scores, support=[True, False, True, False], top=3,
                             feature_names=["a", "b", "c", "d"], ax=plt.figure().gca())
    bars = [p for p in ax.patches if p.get_gid() == "scores"]
    assert len(bars) == 3
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "c", "d"]
    assert np.isfinite(bars[0].get_height())
    with pytest.raises(ValueError, match="support"):
        plot_feature_scores(scores, support=[True], ax=plt.figure().gca())


def test_gap_and_cv_curves():
    grid = np.array([10, 20, 50, 100])
    ax = plot_gap_curve(grid, [0.1, 0.3, 0.5, 0.4], [0.02] * 4, chosen=50, log_x=True,
                        ax=plt.figure().gca())
    chosen = [ln for ln in ax.get_lines() if ln.get_gid() == "chosen"]
    assert len(chosen) == 1 and chosen[0].get_xdata()[0] == 50
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "gap statistic"
    assert ax.containers  # error bars
    ax = plot_cv_curve([1, 2, 3], [0.3, 0.2, 0.25], [0.05, 0.04, 0.05], chosen_k=2,
                       ax=plt.figure().gca())
    assert [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert ax.get_ylabel() == "CV error" and "chosen k = 2" in ax.get_legend().texts[0].get_text()
    with pytest.raises(ValueError, match="one length"):
        plot_cv_curve([1, 2], [0.1], ax=plt.figure().gca())
    with pytest.raises(ValueError, match="sd has shape"):
        plot_gap_curve([1, 2], [0.1, 0.2], [0.1], ax=plt.figure().gca())


def test_missing_matplotlib_message(monkeypatch):
    from sparsefs.plotting import new_figure

    for mod in ("matplotlib", "matplotlib.pyplot", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, mod, None)
    with pytest.raises(ImportError, match=r'pip install "sparsefs\[plot\]"'):
        plot_cv_curve([1, 2], [0.1, 0.2])
    with pytest.raises(ImportError, match=r"sparsefs\[plot\]"):
        new_figure()


def test_plotting_never_imports_matplotlib_at_module_level():
    import ast
    from pathlib import Path

    import sparsefs.plotting as plotting

    for path in Path(plotting.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.startswith("matplotlib") for n in names), path.name
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and n.func.attr == "show"]
        assert not calls, path.name


def test_report_figures_writes_pngs(tmp_path):
    from sparsefs.harness import ExperimentSpec, run

    planted = {"generator": "make_planted_classification",
               "params": {"n_samples": 40, "n_features": 20, "n_classes": 2}}
    spec = ExperimentSpec(datasets=[planted, {**planted, "label": "p2"}],
                          methods=["fisher_score", "all"], k=[1, 3], cv=3, estimators=["nb"],
                          metrics=["accuracy"])
    res = run(spec, progress=False, keep_predictions=True)
    made = report_figures(res, tmp_path / "figs", prefix="x_")
    files = [name for _, name in made]
    assert files == ["x_planted_classification_accuracy_vs_k.png",
                     "x_planted_classification_roc.png", "x_p2_accuracy_vs_k.png",
                     "x_p2_roc.png", "x_critical_difference.png"]
    for name in files:
        assert (tmp_path / "figs" / name).read_bytes()[:4] == b"\x89PNG"
