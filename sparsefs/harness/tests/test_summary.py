"""Summaries: mean ± sd, best / mean over k, Friedman test and the Nemenyi critical difference."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sparsefs.harness import (
    average_ranks,
    best_over_k,
    friedman_nemenyi,
    mean_over_k,
    nemenyi_critical_difference,
    score_matrix,
    summarize,
)

COLS = ["experiment", "dataset", "method", "fold", "run", "k", "estimator", "metric", "value",
        "fit_time"]


def _table(records):
    return pd.DataFrame([("e", d, m, f, 0, k, "svm", metric, v, 0.0)
                         for d, m, f, k, metric, v in records], columns=COLS)


@pytest.fixture
def tiny():
    # data set A, methods m1 and m2, 2 folds, k in {1, 2, 3}
    acc = {("m1", 1): (0.5, 0.7), ("m1", 2): (0.8, 0.9), ("m1", 3): (0.9, 0.8),
           ("m2", 1): (0.6, 0.6), ("m2", 2): (0.6, 0.6), ("m2", 3): (0.7, 0.5)}
    rows = [("A", m, f, k, "accuracy", v[f]) for (m, k), v in acc.items() for f in (0, 1)]
    rows += [("A", m, f, k, "error", 1 - v[f]) for (m, k), v in acc.items() for f in (0, 1)]
    return _table(rows)


def test_summarize_mean_sd(tiny):
    s = summarize(tiny)
    cell = s[(s["method"] == "m1") & (s["k"] == 1) & (s["metric"] == "accuracy")].iloc[0]
    assert cell["mean"] == pytest.approx(0.6)
    assert cell["sd"] == pytest.approx(np.std([0.5, 0.7], ddof=1))
    assert cell["n"] == 2
    s0 = summarize(tiny, ddof=0)
    assert s0["sd"].iloc[0] == pytest.approx(np.std([0.5, 0.7]))


def test_best_over_k_value_k_and_ties(tiny):
    best = best_over_k(tiny, "accuracy", "svm").set_index("method")
    # m1: k=2 and k=3 both average 0.85 -> the smaller k wins
    assert best.loc["m1", "value"] == pytest.approx(0.85) and best.loc["m1", "k"] == 2
    assert best.loc["m1", "sd"] == pytest.approx(np.std([0.8, 0.9], ddof=1))
    assert best.loc["m2", "value"] == pytest.approx(0.6) and best.loc["m2", "k"] == 1
    # an error: lower is better
    err = best_over_k(tiny, "error").set_index("method")
    assert err.loc["m1", "value"] == pytest.approx(0.15) and err.loc["m1", "k"] == 2
    # k_max
    capped = best_over_k(tiny, "accuracy", k_max=1).set_index("method")
    assert capped.loc["m1", "k"] == 1 and capped.loc["m1", "value"] == pytest.approx(0.6)
    with pytest.raises(ValueError, match="direction"):
        best_over_k(tiny.assign(metric="custom"), "custom")
    custom = tiny[tiny["metric"] == "accuracy"].assign(metric="custom")
    low = best_over_k(custom, "custom", greater_is_better=False).set_index("method")
    assert low.loc["m1", "k"] == 1 and low.loc["m1", "value"] == pytest.approx(0.6)
    with pytest.raises(ValueError, match="no rows"):
        best_over_k(tiny, "roc_auc")


def test_k_max_keeps_single_k_baselines(tiny):
    extra = _table([("A", "all", f, 500, "accuracy", 0.7) for f in (0, 1)])
    best = best_over_k(pd.concat([tiny, extra]), "accuracy", k_max=2).set_index("method")
    assert best.loc["all", "k"] == 500 and best.loc["m1", "k"] == 2


def test_mean_over_k(tiny):
    m = mean_over_k(tiny, "accuracy").set_index("method")
    assert m.loc["m1", "value"] == pytest.approx(np.mean([0.6, 0.85, 0.85]))
    assert m.loc["m1", "n_k"] == 3


def test_average_ranks_with_ties():
    scores = pd.DataFrame({"a": [0.9, 0.8], "b": [0.9, 0.7], "c": [0.5, 0.9]}, index=["d1", "d2"])
    r = average_ranks(scores)
    # d1: a, b tie at 1.5, c 3; d2: c 1, a 2, b 3
    assert r.to_dict() == pytest.approx({"a": 1.75, "b": 2.25, "c": 2.0})
    assert average_ranks(-scores, greater_is_better=False).to_dict() == pytest.approx(r.to_dict())
    with pytest.raises(ValueError, match="NaN"):
        average_ranks(scores.where(scores > 0.6))


# Demšar (2006), Table 5(a): critical values q_alpha of the two-tailed Nemenyi test, k = 2..10.
DEMSAR_Q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
DEMSAR_Q10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]


@pytest.mark.parametrize(("alpha", "table"), [(0.05, DEMSAR_Q05), (0.10, DEMSAR_Q10)])
def test_nemenyi_q_matches_demsar_table(alpha, table):
    for k, q in zip(range(2, 11), table):
        # CD / sqrt(k(k+1)/(6N)) is q_alpha itself
        got = nemenyi_critical_difference(k, 1, alpha) / np.sqrt(k * (k + 1) / 6)
        assert got == pytest.approx(q, abs=1.5e-3), k


def test_nemenyi_cd_hand_computed():
    # Demšar's worked example: k = 4 classifiers, N = 14 data sets
    assert nemenyi_critical_difference(4, 14) == pytest.approx(2.569 * np.sqrt(20 / 84), abs=1e-3)
    assert round(nemenyi_critical_difference(4, 14), 2) == 1.25
    assert round(nemenyi_critical_difference(4, 14, alpha=0.10), 2) == 1.12
    # k = 3, N = 6: 2.343 * sqrt(12 / 36)
    assert nemenyi_critical_difference(3, 6) == pytest.approx(1.3527, abs=1e-3)
    with pytest.raises(ValueError):
        nemenyi_critical_difference(1, 5)
    with pytest.raises(ValueError):
        nemenyi_critical_difference(3, 5, alpha=1.5)


@pytest.mark.parametrize("seed", range(4))
def test_friedman_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    values = np.round(rng.uniform(size=(8, 4)), 1)  # rounding makes ties
    scores = pd.DataFrame(values, columns=list("abcd"))
    res = friedman_nemenyi(scores)
    ref = stats.friedmanchisquare(*(-values).T)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    n, k = values.shape
    ff = (n - 1) * res.statistic / (n * (k - 1) - res.statistic)
    assert res.iman_davenport == pytest.approx(ff)
    assert res.iman_davenport_pvalue == pytest.approx(stats.f.sf(ff, k - 1, (k - 1) * (n - 1)))
    assert res.critical_difference == pytest.approx(nemenyi_critical_difference(k, n))
    assert res.average_ranks.to_dict() == pytest.approx(average_ranks(scores).to_dict())
    assert len(res.pairwise) == 6


def test_friedman_significant_pairs_and_nan_rows():
    # method "good" always best, "bad" always worst, over 12 data sets
    rng = np.random.default_rng(0)
    base = rng.uniform(0.5, 0.6, size=12)
    scores = pd.DataFrame({"good": base + 0.3, "mid": base + 0.1 + rng.uniform(0, 0.05, 12),
                           "bad": base})
    scores.loc[12] = [np.nan, 0.5, 0.4]
    res = friedman_nemenyi(scores)
    assert res.n_datasets == 12 and res.pvalue < 1e-3
    pairs = res.pairwise.set_index(["method_a", "method_b"])
    assert bool(pairs.loc[("good", "bad"), "significant"])
    assert pairs.loc[("good", "bad"), "rank_difference"] == pytest.approx(2.0)
    assert res.average_ranks["good"] == 1.0
    with pytest.raises(ValueError, match="2 data sets"):
        friedman_nemenyi(scores.iloc[:1])


def test_score_matrix_pivot(tiny):
    mat = score_matrix(best_over_k(tiny, "accuracy"))
    assert list(mat.columns) == ["m1", "m2"] and list(mat.index) == ["A"]
