"""Statistics of the standing page, against scipy, statsmodels, hand computations and Demšar's
worked example (JMLR 7, 2006)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sparsefs.harness.standing import (
    cluster_order,
    pairwise_wilcoxon_holm,
    rank_tests,
    ranking_similarity,
    simple_winner,
    stability_by_dataset,
    summarise_stability,
    verdict,
)
from sparsefs.metrics import nogueira_index

# Demšar (2006), Table 6: AUC of C4.5 and three variants on 14 UCI data sets (published table)
DEMSAR = pd.DataFrame(
    [[0.763, 0.768, 0.771, 0.798], [0.599, 0.591, 0.590, 0.569], [0.954, 0.971, 0.968, 0.967],
     [0.628, 0.661, 0.654, 0.657], [0.882, 0.888, 0.886, 0.898], [0.936, 0.931, 0.916, 0.931],
     [0.661, 0.668, 0.609, 0.685], [0.583, 0.583, 0.563, 0.625], [0.775, 0.838, 0.866, 0.875],
     [1.000, 1.000, 1.000, 1.000], [0.940, 0.962, 0.965, 0.962], [0.619, 0.666, 0.614, 0.669],
     [0.972, 0.981, 0.975, 0.975], [0.957, 0.978, 0.946, 0.970]],
    columns=["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"])


def test_wilcoxon_rank_sums_of_demsars_example():
    # Demšar section 3.1.3: C4.5+m against C4.5, zero differences split: R+ = 93, R- = 12
    res = pairwise_wilcoxon_holm(DEMSAR, "C4.5", methods=["C4.5+m"])
    row = res.table.loc["C4.5+m"]
    assert (row["r_plus"], row["r_minus"]) == (93.0, 12.0)
    assert (row["wins"], row["ties"], row["losses"]) == (10, 2, 2)
    # T = min(R+, R-) = 12 is below the critical value 21 of N = 14 at alpha 0.05
    assert row["pvalue"] < 0.05 and row["direction"] == "better"
    ref = stats.wilcoxon(DEMSAR["C4.5+m"], DEMSAR["C4.5"], zero_method="zsplit")
    assert row["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_pairwise_matches_scipy_and_holm_by_hand(seed):
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.6, 0.9, size=9)
    scores = pd.DataFrame({"ref": base, "a": base + rng.normal(0.03, 0.02, 9),
                           "b": base + rng.normal(0, 0.02, 9),
                           "c": base - rng.normal(0.04, 0.01, 9)})
    res = pairwise_wilcoxon_holm(scores, "ref")
    t = res.table
    p = []
    for m in ("a", "b", "c"):
        ref = stats.wilcoxon(scores[m], scores["ref"], zero_method="zsplit").pvalue
        assert t.loc[m, "pvalue"] == pytest.approx(ref, rel=1e-12)
        p.append(ref)
    # Holm by hand: sorted p times (m - i), running maximum, capped at 1
    order = np.argsort(p)
    adj = np.empty(3)
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (3 - i) * p[j]))
        adj[j] = running
    assert t.loc[["a", "b", "c"], "p_holm"].to_numpy() == pytest.approx(adj)
    sm = pytest.importorskip("statsmodels.stats.multitest")
    assert adj == pytest.approx(sm.multipletests(p, method="holm")[1])
    assert t.loc["c", "mean_diff"] < 0 < t.loc["a", "mean_diff"]


def test_pairwise_direction_and_all_ties():
    n = 12
    base = np.linspace(0.5, 0.9, n)
    scores = pd.DataFrame({"ref": base, "up": base + 0.05, "same": base, "down": base - 0.05})
    t = pairwise_wilcoxon_holm(scores, "ref").table
    assert t.loc["up", "direction"] == "better" and t.loc["down", "direction"] == "worse"
    assert t.loc["same", "pvalue"] == 1.0 and t.loc["same", "ties"] == n
    assert t.loc["same", "direction"] == ""
    # lower is better: the directions flip
    t2 = pairwise_wilcoxon_holm(scores, "ref", greater_is_better=False).table
    assert t2.loc["up", "direction"] == "worse" and t2.loc["down", "direction"] == "better"
    with pytest.raises(ValueError, match="reference"):
        pairwise_wilcoxon_holm(scores, "nope")


def test_pairwise_skips_missing_rows():
    scores = pd.DataFrame({"ref": [0.5, 0.6, 0.7, 0.8], "a": [0.6, np.nan, 0.8, 0.9]})
    t = pairwise_wilcoxon_holm(scores, "ref").table
    assert t.loc["a", "n"] == 3 and t.loc["a", "wins"] == 3


def test_rank_tests_average_ranks_by_hand():
    res = rank_tests(DEMSAR)
    # ranks recomputed from the printed table (ties averaged); Demšar prints 2.893 / 1.964 for
    # the last two from unrounded AUCs, the printed three-decimal values tie them on "voting"
    assert res.average_ranks.round(3).tolist() == [3.143, 2.0, 2.929, 1.929]
    assert res.n_datasets == 14 and res.n_methods == 4
    assert round(res.critical_difference, 2) == 1.25


def test_simple_winner_best_average_rank_among_candidates():
    scores = pd.DataFrame({"a": [0.9, 0.8, 0.7], "b": [0.8, 0.9, 0.6], "c": [0.95, 0.95, 0.95]})
    # c is best overall but not a candidate; a (avg rank 2.33) beats b (2.67)
    assert simple_winner(scores, ["b", "a"]) == "a"
    tie = pd.DataFrame({"a": [0.9, 0.8], "b": [0.8, 0.9]})
    assert simple_winner(tie, ["b", "a"]) == "b"  # ties: the first listed
    with pytest.raises(ValueError, match="simple"):
        simple_winner(scores, ["z"])


def test_ranking_similarity_by_hand():
    tops = {("d1", 0): {"a": [0, 1, 2, 3], "b": [0, 1, 5, 6], "c": [7, 8, 9, 10]},
            ("d2", 0): {"a": [0, 1, 2, 3], "b": [0, 1, 2, 3]}}
    sim = ranking_similarity(tops, k=4)
    assert sim.loc["a", "b"] == pytest.approx((0.5 + 1.0) / 2)
    assert sim.loc["a", "c"] == 0.0 and sim.loc["c", "a"] == 0.0
    assert (np.diag(sim.to_numpy()) == 1.0).all()
    assert sim.loc["b", "a"] == sim.loc["a", "b"]
    # a shorter list still counts against k
    assert ranking_similarity({("d", 0): {"a": [0, 1], "b": [0, 1, 2, 3]}}, 4).loc["a", "b"] \
        == 0.5


def test_cluster_order_groups_near_identical_methods():
    sim = pd.DataFrame(np.array([[1, .1, .95, .1], [.1, 1, .1, .9], [.95, .1, 1, .1],
                                 [.1, .9, .1, 1]]), index=list("abcd"), columns=list("abcd"))
    order = cluster_order(sim)
    assert sorted(order) == list("abcd")
    pos = {m: i for i, m in enumerate(order)}
    assert abs(pos["a"] - pos["c"]) == 1 and abs(pos["b"] - pos["d"]) == 1


def test_stability_matches_nogueira_and_pools_by_variance():
    rng = np.random.default_rng(0)
    Z1 = rng.random((5, 40)) < 0.2
    Z2 = np.zeros((5, 40), dtype=bool)
    Z2[:, :8] = True
    Z2[2, 0], Z2[2, 9] = False, True
    table = stability_by_dataset({("d1", "m"): Z1, ("d2", "m"): Z2,
                                  ("d1", "empty"): np.zeros((5, 40), dtype=bool)})
    est = nogueira_index(Z1)
    row = table[(table.dataset == "d1") & (table.method == "m")].iloc[0]
    assert row["value"] == pytest.approx(est.value) and row["ci_low"] == pytest.approx(est.ci_low)
    assert np.isnan(table[table.method == "empty"]["value"]).all()
    summ = summarise_stability(table)
    e2 = nogueira_index(Z2)
    mean = (est.value + e2.value) / 2
    half = stats.norm.ppf(0.975) * np.sqrt(est.variance + e2.variance) / 2
    assert summ.loc["m", "value"] == pytest.approx(mean)
    assert summ.loc["m", "ci_high"] == pytest.approx(mean + half)
    assert summ.loc["m", "n_datasets"] == 2 and np.isnan(summ.loc["empty", "value"])


def test_verdict_words_follow_the_numbers():
    n = 10
    base = np.linspace(0.6, 0.9, n)
    scores = pd.DataFrame({"t": base, "good": base + 0.04, "bad": base - 0.05,
                           "same": base + np.r_[0.01, -0.01] .repeat(n // 2)},
                          index=[f"d{i}" for i in range(n)])
    pw = pairwise_wilcoxon_holm(scores, "t")
    assert verdict("good", pw, scores, metric="accuracy").startswith("beats t on accuracy")
    assert verdict("bad", pw, scores, metric="accuracy").startswith("worse than t")
    same = verdict("same", pw, scores, metric="accuracy")
    assert same.startswith("indistinguishable from t") and "5 / 0 / 5" in same
    assert "ahead on 5 of 10" in same
    assert "simple winner" in verdict("t", pw, scores, metric="accuracy")
