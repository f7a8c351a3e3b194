r"""Benchmark (a): filter methods on microarray data with nested cross-validation.

After Bommert, Sun, Bischl, Rahnenführer & Lang, "Benchmark for filter methods for feature
selection in high-dimensional classification data", CSDA 143:106839 (2020), written from
their description: the accuracy of classifiers on the top-k features with k tuned inside
nested resampling, the run time of the methods, and the similarity of their rankings.

One cell (data set x method):

* outer: stratified K-fold CV (``outer_splits`` x ``outer_repeats``; the splits depend on the
  data set only, so every method sees the same folds);
* on each outer training fold: the features are z-scored with the training rows' statistics
  (or left as stored for the ranking: ``input = "raw"``), the method is fitted **once** and
  gives a ranking (its top ``max(k)`` features are stored);
* the classifiers always see the z-scored features, whatever the method's input: the
  methods then differ only in the features they pick (as in the paper, whose SVM scales its
  inputs). A linear SVM on unscaled intensities (values up to 1e4 and more) also needs
  minutes to converge on one fold;
* k is chosen by an inner stratified CV (``inner_splits``, the same splits for every method)
  of each classifier on that ranking, over the k grid (ties: the smallest k); only the outer
  training rows are used, so the outer test estimate is unbiased **for this procedure**. The
  ranking is not refitted inside the inner folds (the cheaper design allowed by the brief:
  it saves ``inner_splits`` fits per outer fold; the inner accuracies are then optimistic for
  every k alike, which moves the chosen k but not the honesty of the outer estimate);
* every classifier (linear SVM, 5-NN) is then fitted on the outer training rows' top-k and
  scored on the outer test rows at every k (the accuracy-vs-k curves) and at the chosen k
  (the nested accuracy, the benchmark's number);
* ``k_choice = "own"``: the method's own rule sets k (``n_features_to_select=None``);
* ``own_predictions``: the method's own ``predict`` (a selecting classifier) as a third
  classifier, its k chosen by an inner CV that refits it inside the inner folds.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from sparsefs._kernels.arrays import to_dense
from sparsefs.harness.standing._budget import Budget
from sparsefs.harness.standing._spec import StandingData, StandingMethod, StandingSpec, cell_seed

__all__ = ["VERSION", "balanced_accuracy", "knn_predictions", "microarray_cell"]

VERSION = 2
"""Bumped when the computation of a cell changes (part of every cell's hash)."""

_DIGITS = 6


def _round(values) -> list[float]:
    return [round(float(v), _DIGITS) for v in values]


def _splits(y: np.ndarray, n_splits: int, seed: int):
    from sklearn.model_selection import StratifiedKFold

    n_splits = int(min(n_splits, max(2, np.bincount(y).max())))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a class smaller than n_splits
        return list(StratifiedKFold(n_splits=n_splits, shuffle=True,
                                    random_state=seed).split(np.zeros(y.shape[0]), y))


def _prepare(kind: str, X_train: np.ndarray, X_test: np.ndarray):
    if kind == "raw":
        return X_train, X_test
    mean = X_train.mean(axis=0)
    sd = X_train.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (X_train - mean) / sd, (X_test - mean) / sd


def _classifier(name: str, n_train: int):
    if name == "svm":
        from sklearn.svm import SVC

        return SVC(kernel="linear", C=1.0)
    if name == "knn":
        from sklearn.neighbors import KNeighborsClassifier

        return KNeighborsClassifier(n_neighbors=min(5, n_train))
    if name == "nb":
        from sklearn.naive_bayes import GaussianNB

        return GaussianNB()
    raise ValueError(f"unknown classifier {name!r} (svm, knn, nb)")


def knn_predictions(X_train, y_train, X_test, order, grid, n_classes: int,
                    n_neighbors: int = 5) -> list[np.ndarray]:
    """Predictions of the ``n_neighbors``-nearest-neighbour classifier (Euclidean, uniform
    votes) on the top-k features of ``order``, for every k of ``grid`` at once.

    The squared distances grow along the ranking, so they are accumulated block by block
    (one pass over the top ``max(grid)`` features instead of one per k). Neighbours tied in
    distance are taken in training-row order, votes tied between classes go to the smallest
    class index (scikit-learn's rule); ``min(n_neighbors, n_train)`` neighbours. Equal to
    ``KNeighborsClassifier(n_neighbors).predict`` whenever no two training rows are at exactly
    the same distance from a test row (tested).
    """
    A = X_train[:, order]
    B = X_test[:, order]
    D = np.zeros((B.shape[0], A.shape[0]))
    m = int(min(n_neighbors, A.shape[0]))
    out, start = [], 0
    for k in grid:
        a, b = A[:, start:k], B[:, start:k]
        D += (b * b).sum(axis=1)[:, None] + (a * a).sum(axis=1)[None, :] - 2.0 * (b @ a.T)
        start = k
        near = np.argsort(D, axis=1, kind="stable")[:, :m]
        votes = np.zeros((B.shape[0], n_classes), dtype=np.int64)
        np.add.at(votes, (np.repeat(np.arange(B.shape[0]), m), y_train[near].ravel()), 1)
        out.append(np.argmax(votes, axis=1))
    return out


def balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean recall over the classes present in ``y_true`` (scikit-learn's
    ``balanced_accuracy_score`` without its input checks)."""
    classes = np.unique(y_true)
    return float(np.mean([np.mean(y_pred[y_true == c] == c) for c in classes]))


def _accuracy_curve(name: str, X_tr, y_tr, X_te, y_te, order, grid, n_classes):
    """Accuracy and balanced accuracy of classifier ``name`` on the top-k of ``order``."""
    if name == "knn":
        preds = knn_predictions(X_tr, y_tr, X_te, np.asarray(order), grid, n_classes)
    else:
        preds = []
        for k in grid:
            cols = np.sort(order[:k])
            clf = _classifier(name, X_tr.shape[0]).fit(X_tr[:, cols], y_tr)
            preds.append(clf.predict(X_te[:, cols]))
    acc = [float(np.mean(p == y_te)) for p in preds]
    bacc = [balanced_accuracy(y_te, p) for p in preds]
    return acc, bacc


def _best_k(grid, curve) -> int:
    """The grid value of the highest mean accuracy (rounded to 9 decimals; ties: smallest k,
    the harness's tie rule)."""
    vals = np.round(np.asarray(curve, dtype=float), 9)
    return int(grid[int(np.argmax(vals))])


def _build_estimator(method: StandingMethod, seed: int, n_classes: int, n_select: int | None):
    from sparsefs.harness._protocols import build_method

    return build_method(method.method_spec, seed=seed, n_classes=n_classes,
                        n_features_to_select=n_select)


def _timed_fit_cpu(est, X, y) -> tuple[float, float]:
    """(wall, CPU) seconds of ``est.fit(X, y)``."""
    from sparsefs.harness.standing._budget import cpu_seconds

    t0, c0 = time.perf_counter(), cpu_seconds()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return time.perf_counter() - t0, cpu_seconds() - c0


def _own_predictions(method, seed, n_classes, X_tr, y_tr, X_te, y_te, grid, inner):
    """The method's own predict: nested choice of k with refits inside the inner folds."""
    def path(X_a, y_a, X_b):
        est = _build_estimator(method, seed, n_classes, max(grid))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if hasattr(est, "fit_path"):
                models = est.fit_path(X_a, y_a, list(grid))
            else:
                models = [_build_estimator(method, seed, n_classes, k).fit(X_a, y_a) for k in grid]
        return [np.asarray(m.predict(X_b)) for m in models]

    t0 = time.perf_counter()
    inner_acc = np.zeros(len(grid))
    for tr, va in inner:
        preds = path(X_tr[tr], y_tr[tr], X_tr[va])
        inner_acc += [np.mean(p == y_tr[va]) for p in preds]
    inner_acc /= len(inner)
    preds = path(X_tr, y_tr, X_te)
    outer = [float(np.mean(p == y_te)) for p in preds]
    k_star = _best_k(grid, inner_acc)
    return {"inner": _round(inner_acc), "outer_acc": _round(outer), "k_star": k_star,
            "acc": outer[list(grid).index(k_star)], "time": round(time.perf_counter() - t0, 4)}


def microarray_cell(spec: StandingSpec, dataset: StandingData, method: StandingMethod,
                    *, budget: Budget | None = None) -> dict[str, Any]:
    """Compute one (data set, method) cell of the microarray benchmark (see the module).

    Returns
    -------
    dict
        ``n, p, n_classes, grid, classifiers`` and ``folds``: per outer fold its ``fit_time``
        and ``fit_cpu`` (wall and CPU seconds),
        ``order`` (the top ``max(k)`` feature indices, best first), ``n_support`` (the
        method's own selection size, when it has one), and per classifier the inner and outer
        curves, the chosen ``k_star`` and the nested ``acc`` / ``bacc``; ``own`` with
        ``own_predictions``.
    """
    from sparsefs.harness.standing._data import load_matrix

    proto = spec.protocol
    ds = load_matrix(dataset)
    X = to_dense(ds.X)
    X = X.astype(np.float64)
    classes, y = np.unique(ds.y, return_inverse=True)
    n, p = X.shape
    n_classes = int(classes.shape[0])
    grid = [k for k in spec.k_grid() if k <= p]
    K = max(grid)
    classifiers = list(proto.get("classifiers", ["svm", "knn"]))
    outer_splits = int(proto.get("outer_splits", 5))
    outer_repeats = int(proto.get("outer_repeats", 1))
    inner_splits = int(proto.get("inner_splits", 5))
    all_features = method.kind == "baseline" and not (method.stem or method.estimator)

    folds = []
    n_total = outer_repeats * outer_splits
    for rep in range(outer_repeats):
        outer = _splits(y, outer_splits, cell_seed(spec.seed, dataset.label, "", rep))
        for f, (tr, te) in enumerate(outer):
            fold = rep * len(outer) + f
            X_tr, X_te = _prepare("zscore", X[tr], X[te])
            X_rank = X[tr] if method.input == "raw" else X_tr
            y_tr, y_te = y[tr], y[te]
            rec: dict[str, Any] = {"fold": fold}
            if all_features:
                order = np.arange(p)
                for c in classifiers:
                    acc, bacc = _accuracy_curve(c, X_tr, y_tr, X_te, y_te, order, [p],
                                                n_classes)
                    rec[c] = {"k_star": p, "acc": acc[0], "bacc": bacc[0]}
                rec["fit_time"] = rec["fit_cpu"] = 0.0
                folds.append(rec)
                continue
            seed = cell_seed(spec.seed, dataset.label, method.label, fold)
            own_k = method.k_choice == "own"
            est = _build_estimator(method, seed, n_classes, None if own_k else K)
            wall, cpu = _timed_fit_cpu(est, X_rank, y_tr)
            rec["fit_time"], rec["fit_cpu"] = round(wall, 4), round(cpu, 4)
            from sparsefs.harness._protocols import feature_order

            full = feature_order(est)
            order = full[:K]
            rec["order"] = [int(j) for j in order]
            support = getattr(est, "support_", None)
            if support is not None:
                rec["n_support"] = int(np.asarray(support).sum())
            inner = _splits(y_tr, inner_splits,
                            cell_seed(spec.seed, dataset.label, "", rep, f + 1))
            for c in classifiers:
                inner_acc = np.zeros(len(grid))
                for a, b in inner:
                    acc, _ = _accuracy_curve(c, X_tr[a], y_tr[a], X_tr[b], y_tr[b], order,
                                             grid, n_classes)
                    inner_acc += acc
                inner_acc /= len(inner)
                outer_acc, outer_bacc = _accuracy_curve(c, X_tr, y_tr, X_te, y_te, order,
                                                        grid, n_classes)
                if own_k:
                    k_star = int(min(max(rec.get("n_support", K), 1), p))
                    acc, bacc = _accuracy_curve(c, X_tr, y_tr, X_te, y_te, full, [k_star],
                                                n_classes) if k_star not in grid else (
                        [outer_acc[grid.index(k_star)]], [outer_bacc[grid.index(k_star)]])
                    chosen = (acc[0], bacc[0])
                else:
                    k_star = _best_k(grid, inner_acc)
                    i = grid.index(k_star)
                    chosen = (outer_acc[i], outer_bacc[i])
                rec[c] = {"inner": _round(inner_acc), "outer_acc": _round(outer_acc),
                          "outer_bacc": _round(outer_bacc), "k_star": k_star,
                          "acc": round(chosen[0], _DIGITS), "bacc": round(chosen[1], _DIGITS)}
            if method.own_predictions:
                rec["own"] = _own_predictions(method, seed, n_classes, X_tr, y_tr, X_te, y_te,
                                              grid, inner)
            folds.append(rec)
            if budget is not None:
                budget.check(len(folds), n_total)
    return {"n": n, "p": p, "n_classes": n_classes, "grid": grid, "classifiers": classifiers,
            "folds": folds}
