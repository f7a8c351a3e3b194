"""Metrics against independent references: brute force over pairs and permutations,
scikit-learn's Rand index, and hand-computed cases."""

from itertools import combinations, permutations

import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score, rand_score

from sparsefs.metrics import (
    clustering_accuracy,
    clustering_error_rate,
    normalized_mutual_info,
    support_scores,
)


def _cer_brute(a, b):
    pairs = list(combinations(range(len(a)), 2))
    return sum((a[i] == a[j]) != (b[i] == b[j]) for i, j in pairs) / len(pairs)


def _acc_brute(a, b):
    ka, kb = np.unique(a), np.unique(b)
    best = 0
    for perm in permutations(ka, len(kb)) if len(ka) >= len(kb) else []:
        mapping = dict(zip(kb, perm))
        best = max(best, np.mean([mapping[v] == t for v, t in zip(b, a)]))
    return best


def test_cer_hand_computed():
    # pairs of (0,0,1,1) vs (0,1,1,1): (0,1) same/diff, (0,2) diff/diff, (0,3) diff/diff,
    # (1,2) diff/same, (1,3) diff/same, (2,3) same/same -> 3 disagreements of 6
    assert clustering_error_rate([0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx(0.5)
    assert clustering_error_rate([0, 0, 1, 1], [5, 5, 2, 2]) == 0.0
    assert clustering_error_rate([1], [2]) == 0.0


def test_cer_brute_force_and_rand_index():
    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = rng.integers(0, 4, size=17), rng.integers(0, 3, size=17)
        assert clustering_error_rate(a, b) == pytest.approx(_cer_brute(a, b))
        assert clustering_error_rate(a, b) == pytest.approx(1 - rand_score(a, b))


def test_accuracy_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(20):
        a, b = rng.integers(0, 4, size=15), rng.integers(0, 3, size=15)
        assert clustering_accuracy(a, b) == pytest.approx(_acc_brute(a, b))
    assert clustering_accuracy(["x", "x", "y"], [1, 1, 0]) == 1.0


def test_nmi_wraps_sklearn():
    a, b = [0, 0, 1, 1, 2], [1, 1, 0, 2, 2]
    assert normalized_mutual_info(a, b) == pytest.approx(normalized_mutual_info_score(a, b))
    geo = normalized_mutual_info_score(a, b, average_method="geometric")
    assert normalized_mutual_info(a, b, average_method="geometric") == pytest.approx(geo)
    with pytest.raises(ValueError, match="average_method="):
        normalized_mutual_info(a, b, average_method="mean")


def test_length_mismatch_is_a_clear_error():
    for f in (clustering_error_rate, clustering_accuracy, normalized_mutual_info):
        with pytest.raises(ValueError, match="same length"):
            f([0, 1], [0, 1, 1])


def test_support_scores_masks_and_indices():
    truth = np.zeros(10, dtype=bool)
    truth[[1, 4, 7]] = True
    s = support_scores(truth, [1, 4, 9, 0])
    assert s["relevant_kept"] == 2 and s["noise_kept"] == 2 and s["n_selected"] == 4
    assert s["precision"] == 0.5 and s["recall"] == pytest.approx(2 / 3)
    assert s["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert s["noise_zeroed"] == pytest.approx(5 / 7)
    assert support_scores([1, 4, 7], truth)["f1"] == 1.0
    assert support_scores(truth, np.zeros(10, dtype=bool))["precision"] == 0.0
    with pytest.raises(ValueError, match="outside"):
        support_scores(truth, [12])


def test_summarize_of_a_results_object_is_kept_and_follows_a_new_table():
    """Reference: the summary of the bare DataFrame (never cached). A Results object keeps the
    summary of its table (claims summarise one stored run many times), returns equal copies,
    and summarises again when its table is replaced."""
    import pandas as pd

    from sparsefs.harness._results import Results
    from sparsefs.metrics._summary import summarize

    rows = [{"experiment": "e", "dataset": "d", "method": m, "estimator": "svm",
             "metric": "accuracy", "k": k, "fold": f, "value": 0.1 * f + k + (m == "b")}
            for m in ("a", "b") for k in (1, 2) for f in range(3)]
    table = pd.DataFrame(rows)
    res = Results(table=table, meta={})
    first = summarize(res)
    pd.testing.assert_frame_equal(first, summarize(table))
    first.loc[0, "mean"] = -1.0  # a caller's edit does not reach the kept summary
    pd.testing.assert_frame_equal(summarize(res), summarize(table))
    res.table = table.assign(value=table["value"] * 2)
    pd.testing.assert_frame_equal(summarize(res), summarize(res.table))
    assert summarize(res)["mean"].iloc[0] == 2 * summarize(table)["mean"].iloc[0]
