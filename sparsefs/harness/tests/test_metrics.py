"""Per-fold metrics against scikit-learn; the clustering metrics the harness uses, by hand."""

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    f1_score,
    precision_score,
    recall_score,
    roc_auc_score,
)

from sparsefs.harness import binary_roc_auc, macro_prf, roc_auc_ovr
from sparsefs.harness._metrics import classification_metrics
from sparsefs.metrics import clustering_accuracy, clustering_error_rate, normalized_mutual_info


@pytest.mark.parametrize("seed", range(6))
def test_macro_prf_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    n_classes = rng.integers(2, 6)
    y_true = rng.integers(0, n_classes, size=30)
    y_pred = rng.integers(0, n_classes + 1, size=30)  # sometimes a label never true
    if seed % 2:
        y_pred[y_pred == 0] = 1  # a label never predicted
    p, r, f = macro_prf(y_true, y_pred)
    kw = {"average": "macro", "zero_division": 0}
    assert p == pytest.approx(precision_score(y_true, y_pred, **kw), abs=1e-12)
    assert r == pytest.approx(recall_score(y_true, y_pred, **kw), abs=1e-12)
    assert f == pytest.approx(f1_score(y_true, y_pred, **kw), abs=1e-12)


def test_binary_auc_matches_sklearn_with_ties():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=50).astype(bool)
    s = np.round(rng.normal(size=50) + y, 1)  # rounding makes ties
    assert binary_roc_auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert np.isnan(binary_roc_auc(np.ones(4, bool), np.arange(4.0)))


def test_auc_ovr_matches_sklearn_on_probabilities():
    rng = np.random.default_rng(1)
    y = np.repeat(np.arange(4), 10)
    logits = rng.normal(size=(40, 4)) + 1.5 * np.eye(4)[y]
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    ours = roc_auc_ovr(y, proba)
    assert ours == pytest.approx(roc_auc_score(y, proba, multi_class="ovr"), abs=1e-12)
    two = proba[y < 2][:, :2]
    two = two / two.sum(axis=1, keepdims=True)
    assert roc_auc_ovr(y[y < 2], two) == pytest.approx(roc_auc_score(y[y < 2], two[:, 1]))


def test_auc_ovr_skips_unscorable_classes():
    y = np.array([0, 0, 1, 1, 2, 2])
    s = np.array([[2, 0, np.nan]] * 3 + [[0, 2, np.nan]] * 3, dtype=float)
    # class 2 was never seen by the model (NaN column): averaged over classes 0 and 1
    assert roc_auc_ovr(y, s) == pytest.approx(np.mean([
        roc_auc_score(y == 0, s[:, 0]), roc_auc_score(y == 1, s[:, 1])]))
    with pytest.raises(ValueError, match="2-D"):
        roc_auc_ovr(y, s[:, 0])


def test_classification_metrics_block():
    y = np.array([0, 0, 1, 1, 2])
    pred = np.array([0, 1, 1, 1, 0])
    out = classification_metrics(y, pred, None, ("accuracy", "error", "f1_macro", "roc_auc"))
    assert out["accuracy"] == accuracy_score(y, pred) == 0.6
    assert out["error"] == pytest.approx(0.4)
    assert out["f1_macro"] == pytest.approx(f1_score(y, pred, average="macro", zero_division=0))
    assert np.isnan(out["roc_auc"])


def test_clustering_metrics_hand_computed():
    # truth {0,1},{2,3}; prediction {0},{1,2,3}: of the 6 pairs, (0,1) together in truth only,
    # (1,2) and (1,3) together in the prediction only -> CER = 3/6.
    truth = [0, 0, 1, 1]
    pred = [5, 7, 7, 7]
    assert clustering_error_rate(truth, pred) == pytest.approx(0.5)
    # best matching: 5->0, 7->1 gives 3 of 4 right
    assert clustering_accuracy(truth, pred) == pytest.approx(0.75)
    assert normalized_mutual_info(truth, truth) == pytest.approx(1.0)
    assert clustering_error_rate(truth, [1, 1, 0, 0]) == 0.0
