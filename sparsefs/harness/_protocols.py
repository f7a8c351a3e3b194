"""One (data set, method, fold) of an experiment: the work a joblib task does.

Selection always happens on the training rows of the fold (after the in-fold preprocessing);
the test rows are touched only by ``transform``/``predict`` of models fitted on training rows.
"""

from __future__ import annotations

import logging
import time
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from sparsefs.harness._metrics import classification_metrics
from sparsefs.harness._seeds import SPLIT_STREAM, derive_seed
from sparsefs.harness._spec import EstimatorSpec, ExperimentSpec, MethodSpec
from sparsefs.utils._factory import make_estimator

__all__ = ["ROW_COLUMNS", "CoxRidge", "build_estimator", "build_method", "feature_order",
           "run_task"]

logger = logging.getLogger("sparsefs.harness")

ROW_COLUMNS = (
    "experiment",
    "dataset",
    "method",
    "fold",
    "run",
    "k",
    "estimator",
    "metric",
    "value",
    "fit_time",
)
"""The columns of the tidy results table, in order."""

SELECTION = "selection"
"""The ``estimator`` value of rows that describe the selection itself (fit time, counts)."""

_SMOTE_HINT = (
    "SMOTE preprocessing needs imbalanced-learn (a sparsefs dependency), which is missing: "
    'pip install "sparsefs[smote]"'
)


# --------------------------------------------------------------------------------------------
# estimators
# --------------------------------------------------------------------------------------------


def build_method(
    method: MethodSpec,
    *,
    seed: int | None,
    n_classes: int | None,
    n_features_to_select: int | None = None,
    protocol: str = "supervised",
) -> Any:
    """Instantiate a method with the harness's defaults.

    Parameters
    ----------
    method : MethodSpec
    seed : int or None
        ``random_state`` unless the spec's params give one.
    n_classes : int or None
        ``n_clusters`` unless given.
    n_features_to_select : int or None
        Set unless given (``rank`` mode passes the largest k; ``refit`` each k).
    protocol : str
        ``"regression"`` sets ``target_type="regression"`` where the method has it (integer
        targets such as ages are then numbers, not classes), unless given.

    Returns
    -------
    estimator or None
        ``None`` for the all-features baseline without an estimator.
    """
    if not method.stem and method.estimator is None:
        return None
    defaults: dict[str, Any] = {"random_state": seed}
    if n_classes is not None:
        defaults["n_clusters"] = n_classes
    if n_features_to_select is not None:
        defaults["n_features_to_select"] = n_features_to_select
    if protocol == "regression":
        defaults["target_type"] = "regression"
    return make_estimator(method.stem or method.estimator, method.params, defaults=defaults,
                          what=f"method {method.display!r}")


_build_method = build_method


def method_requires_y(method: MethodSpec, est: Any) -> bool:
    """Whether the method is supervised (registry row, or scikit-learn's target tag)."""
    if method.stem:
        from sparsefs.utils import get_method

        return get_method(method.stem).supervision == "supervised"
    if est is None:
        return False
    try:
        from sklearn.utils import get_tags

        return bool(get_tags(est).target_tags.required)
    except Exception:  # pragma: no cover - exotic estimators
        return False


class CoxRidge:
    r"""The survival protocol's downstream model: a ridge-penalised Cox model.

    Maximises :math:`\ell(\beta) - \tfrac{\text{ridge}}{2}\|\beta\|^2` (Breslow ties) on the
    training rows' selected features, standardised with the training rows' means and
    deviations; ``predict`` returns the risk score :math:`x^\top\hat\beta` (higher = earlier
    event), scored by Harrell's C-index. The ridge term keeps the fit finite when a few
    features separate the event times (monotone likelihood) or outnumber the events.

    Parameters
    ----------
    ridge : float, default=1.0
        The penalty, in units of the log partial likelihood.
    """

    def __init__(self, ridge: float = 1.0):
        self.ridge = ridge

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {"ridge": self.ridge}

    def set_params(self, **params: Any) -> CoxRidge:
        for key, value in params.items():
            if key != "ridge":
                raise ValueError(f"CoxRidge has no parameter {key!r}; it takes ridge.")
            self.ridge = value
        return self

    def fit(self, X, y) -> CoxRidge:
        from sparsefs._kernels import cox

        X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        self.mean_ = X.mean(axis=0)
        sd = X.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        Z = (X - self.mean_) / self.scale_
        data = cox.cox_data(y["time"], y["event"])
        self.coef_, self.loglik_, self.n_iter_ = cox.newton_cox(Z, data, "breslow",
                                                                ridge=float(self.ridge))
        return self

    def predict(self, X) -> np.ndarray:
        X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        return ((X - self.mean_) / self.scale_) @ self.coef_


def build_estimator(spec: EstimatorSpec, *, seed: int, n_train: int, n_classes: int | None
                    ) -> Any:
    """A downstream estimator (built-ins: svm, nb, knn, tree, kmeans, ridge, cox).

    Parameters
    ----------
    spec : EstimatorSpec
    seed : int
        ``random_state`` where the estimator has one (unless given).
    n_train : int
        KNN uses ``min(5, n_train)`` neighbours.
    n_classes : int
        ``n_clusters`` of k-means.
    """
    params = dict(spec.params)
    if spec.estimator is not None:
        return make_estimator(spec.estimator, params, defaults={"random_state": seed},
                              what=f"estimator {spec.name!r}")
    if spec.name == "svm":
        from sklearn.svm import SVC

        est = SVC(kernel="linear", C=1.0)
    elif spec.name == "nb":
        from sklearn.naive_bayes import GaussianNB

        est = GaussianNB()
    elif spec.name == "knn":
        from sklearn.neighbors import KNeighborsClassifier

        est = KNeighborsClassifier(n_neighbors=min(5, n_train))
    elif spec.name == "tree":
        from sklearn.tree import DecisionTreeClassifier

        est = DecisionTreeClassifier(random_state=seed)
    elif spec.name == "kmeans":
        from sklearn.cluster import KMeans

        est = KMeans(n_clusters=n_classes, n_init=1, random_state=seed)
    elif spec.name == "ridge":
        from sklearn.linear_model import RidgeCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        # the penalty by efficient leave-one-out CV on the training rows: nested in the fold
        est = make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-3, 3, 13)))
        if params:
            raise ValueError(f"estimator 'ridge' takes no params; got {sorted(params)}.")
        return est
    elif spec.name == "cox":
        est = CoxRidge()
    else:  # pragma: no cover - "self" is handled by the caller
        raise ValueError(spec.name)
    return make_estimator(est, params, what=f"estimator {spec.name!r}", clone=False)


def feature_order(est: Any) -> np.ndarray:
    """Feature indices, best first, from a fitted method.

    Uses, in this order, ``ranking_`` (1 = best), ``scores_``, ``feature_importances_`` and
    ``|coef_|`` (summed over classes); ties go to the lower index (stable sort).

    Raises
    ------
    TypeError
        If the estimator exposes none of these.
    """
    if hasattr(est, "ranking_"):
        return np.argsort(np.asarray(est.ranking_), kind="stable")
    for attr in ("scores_", "feature_importances_"):
        if hasattr(est, attr):
            return np.argsort(-np.asarray(getattr(est, attr), dtype=float), kind="stable")
    if hasattr(est, "coef_"):
        coef = np.abs(np.atleast_2d(np.asarray(est.coef_, dtype=float))).sum(axis=0)
        return np.argsort(-coef, kind="stable")
    raise TypeError(
        f"{type(est).__name__} exposes no ranking (ranking_, scores_, feature_importances_ or "
        "coef_); evaluate it with mode = 'own' or 'all'."
    )


def _support_of(est: Any, n_features: int) -> np.ndarray:
    if hasattr(est, "support_"):
        return np.asarray(est.support_, dtype=bool)
    if hasattr(est, "get_support"):
        return np.asarray(est.get_support(), dtype=bool)
    return np.ones(n_features, dtype=bool)


def _scores_of(est: Any) -> np.ndarray | None:
    for attr in ("scores_", "feature_importances_"):
        if hasattr(est, attr):
            return np.asarray(getattr(est, attr), dtype=float)
    return None


def _timed_fit(est: Any, X: Any, y: np.ndarray | None) -> float:
    start = time.perf_counter()
    if y is None:
        est.fit(X)
    else:
        est.fit(X, y)
    return time.perf_counter() - start


# --------------------------------------------------------------------------------------------
# preprocessing inside a fold
# --------------------------------------------------------------------------------------------


def smote(X: Any, y: np.ndarray, seed: int, k_neighbors: int | str = 5
          ) -> tuple[Any, np.ndarray]:
    """Oversample every minority class to the majority's size (imbalanced-learn's SMOTE).

    ``k_neighbors = min(k_neighbors, smallest class - 1)``; ``k_neighbors="smallest"`` uses
    ``smallest class - 1`` (the SMBA-CSFS code's setting). With a class of one sample the data
    are returned unchanged (logged).

    Raises
    ------
    ImportError
        If imbalanced-learn is not installed (``pip install "sparsefs[smote]"``).
    """
    from sparsefs.selection._class_specific import smote_resample

    try:  # refused on every fold, not only on the folds that need a resample
        import imblearn.over_sampling  # noqa: F401
    except ImportError as exc:
        raise ImportError(_SMOTE_HINT) from exc
    counts = np.bincount(y)
    counts = counts[counts > 0]
    if counts.min() < 2 and counts.min() != counts.max():
        logger.warning("SMOTE skipped: a class has a single training sample.")
    return smote_resample(X, y, k_neighbors, seed, lone="skip")


def preprocess(
    steps: tuple[str, ...], X_train: Any, y_train: np.ndarray | None, X_test: Any | None,
    seed: int, smote_k_neighbors: int | str = 5,
) -> tuple[Any, np.ndarray | None, Any]:
    """Fit the preprocessing on the training rows only, apply it to both.

    ``zscore``: :class:`~sklearn.preprocessing.StandardScaler` (no centring for sparse X);
    ``smote``: :func:`smote` on the training rows (after z-scoring when both are asked), with
    ``smote_k_neighbors``.
    """
    if "zscore" in steps:
        from sklearn.preprocessing import StandardScaler

        scaler = StandardScaler(with_mean=not sp.issparse(X_train)).fit(X_train)
        X_train = scaler.transform(X_train)
        X_test = None if X_test is None else scaler.transform(X_test)
    if "smote" in steps:
        if y_train is None:
            raise ValueError("SMOTE needs labels.")
        X_train, y_train = smote(X_train, y_train, seed, smote_k_neighbors)
    return X_train, y_train, X_test


# --------------------------------------------------------------------------------------------
# one task
# --------------------------------------------------------------------------------------------


@dataclass
class Task:
    """One (data set, method, fold)."""

    i_data: int
    i_method: int
    fold: int
    dataset: str
    train: np.ndarray
    test: np.ndarray
    #: whether the method may see y_train (False in the scheme without a split)
    use_y: bool = True


@dataclass
class TaskResult:
    """What a task returns to the runner."""

    #: (i_data, i_method, fold): the order of the task in the results table
    key: tuple[int, int, int] = (0, 0, 0)
    rows: list[tuple] = field(default_factory=list)
    supports: list[tuple] = field(default_factory=list)
    predictions: dict[tuple, tuple] = field(default_factory=dict)
    #: wall seconds of the whole task (fit and evaluation), for the progress estimate
    elapsed: float = 0.0
    #: (category, first line of the message, file, line) of every warning raised inside a task
    #: run with ``capture_warnings``, once each: the runner re-issues them in the calling
    #: process (a joblib worker would print them raw on its stderr)
    warnings: list[tuple[type, str, str, int]] = field(default_factory=list)


def _columns(X: Any, cols: np.ndarray) -> Any:
    sub = X[:, cols]
    if sp.issparse(sub) and cols.shape[0] <= 2000:
        return sub.toarray()
    return sub


def _class_scores(est: Any, X: Any, n_classes: int) -> np.ndarray | None:
    """Per-class scores (decision values or probabilities) in the K columns; NaN for classes
    the model never saw."""
    raw = None
    if hasattr(est, "decision_function"):
        try:
            raw = np.asarray(est.decision_function(X), dtype=float)
        except (AttributeError, NotImplementedError):
            raw = None
    if raw is None and hasattr(est, "predict_proba"):
        try:
            raw = np.asarray(est.predict_proba(X), dtype=float)
        except (AttributeError, NotImplementedError):
            raw = None
    if raw is None:
        return None
    classes = np.asarray(getattr(est, "classes_", np.arange(n_classes)), dtype=int)
    out = np.full((X.shape[0], n_classes), np.nan)
    if raw.ndim == 1:  # binary decision function: positive = classes[1]
        if classes.shape[0] != 2:
            return None
        out[:, classes[1]] = raw
        out[:, classes[0]] = -raw
    else:
        out[:, classes] = raw
    return out


def run_task(
    task: Task,
    X: Any,
    y: np.ndarray | None,
    true_support: np.ndarray | None,
    spec: ExperimentSpec,
    *,
    keep_predictions: bool = False,
    capture_warnings: bool = False,
) -> TaskResult:
    """Run one (data set, method, fold) of ``spec`` and return its rows.

    Parameters
    ----------
    task : Task
    X : ndarray or sparse matrix
        The whole data set (rows indexed by ``task.train`` / ``task.test``).
    y : ndarray of int or None
        Class indices ``0..K-1`` of every row.
    true_support : ndarray of bool or None
    spec : ExperimentSpec
    keep_predictions : bool
        Keep the test rows' per-class scores (for ROC curves).
    capture_warnings : bool
        Record the warnings raised inside the task in ``TaskResult.warnings`` instead of
        showing them (in a worker process, whose stderr would print them raw).
    """
    start = time.perf_counter()
    # the filters in force still apply; without capture nothing is recorded (caught stays [])
    with warnings.catch_warnings(record=True) if capture_warnings else nullcontext([]) as caught:
        out = _run_task(task, X, y, true_support, spec, keep_predictions=keep_predictions)
    seen = set()
    for w in caught:
        text = str(w.message).strip().splitlines()[0] if str(w.message).strip() else ""
        if (w.category, text) not in seen:
            seen.add((w.category, text))
            out.warnings.append((w.category, text or w.category.__name__, w.filename,
                                 w.lineno))
    out.elapsed = time.perf_counter() - start
    return out


def _run_task(
    task: Task,
    X: Any,
    y: np.ndarray | None,
    true_support: np.ndarray | None,
    spec: ExperimentSpec,
    *,
    keep_predictions: bool = False,
) -> TaskResult:
    method = spec.methods[task.i_method]
    mode = method.resolved_mode(spec.protocol)
    root = spec.seed
    seed = derive_seed(root, task.i_data, task.i_method, task.fold)
    outcome = spec.protocol in ("regression", "survival")
    n_classes = int(y.max()) + 1 if y is not None and y.size and not outcome else None
    out = TaskResult(key=(task.i_data, task.i_method, task.fold))

    def build_method(*args: Any, **kwargs: Any) -> Any:  # the protocol's defaults included
        return _build_method(*args, protocol=spec.protocol, **kwargs)


    X_tr, X_te = X[task.train], X[task.test]
    y_tr = None if y is None else y[task.train]
    y_te = None if y is None else y[task.test]
    if spec.preprocessing_scope == "fold" and spec.preprocessing:
        prep_seed = derive_seed(root, task.i_data, SPLIT_STREAM, task.fold, 1)
        if task.use_y:
            X_tr, y_tr, X_te = preprocess(spec.preprocessing, X_tr, y_tr, X_te, prep_seed,
                                          spec.smote_k_neighbors)
        else:  # no split: train and test are the same rows
            X_tr, y_tr, _ = preprocess(spec.preprocessing, X_tr, y_tr, None, prep_seed,
                                       spec.smote_k_neighbors)
            X_te = X_tr
    p = X_tr.shape[1]
    y_fit = y_tr if task.use_y else None
    grid = [k for k in spec.k if k <= p]

    def add(k: int, estimator: str, metric: str, value: float, fit_time: float,
            run: int = 0) -> None:
        out.rows.append((spec.name, task.dataset, method.display, task.fold, run, int(k),
                         estimator, metric, float(value), float(fit_time)))

    def add_selection(k: int, cols: np.ndarray, fit_time: float) -> None:
        add(k, SELECTION, "fit_time", fit_time, fit_time)
        add(k, SELECTION, "n_selected", cols.shape[0], fit_time)
        if true_support is not None:
            from sparsefs.metrics import support_scores

            mask = np.zeros(p, dtype=bool)
            mask[cols] = True
            s = support_scores(true_support, mask)
            for key in ("relevant_kept", "noise_kept"):
                add(k, SELECTION, key, s[key], fit_time)
            for key in ("precision", "recall", "f1"):
                add(k, SELECTION, f"support_{key}", s[key], fit_time)

    def record_support(k: int, est: Any, cols: np.ndarray) -> None:
        if not spec.record_support:
            return
        scores = _scores_of(est) if est is not None else None
        ranks = np.asarray(est.ranking_) if est is not None and hasattr(est, "ranking_") else None
        selected = np.zeros(p, dtype=bool)
        selected[cols] = True
        for j in range(p):
            out.supports.append((spec.name, task.dataset, method.display, task.fold, int(k), j,
                                 np.nan if scores is None else float(scores[j]),
                                 -1 if ranks is None else int(ranks[j]), bool(selected[j])))

    # -- the subsets to evaluate: (k, columns, fitted method or None, fit time) --------------
    subsets: list[tuple[int, np.ndarray, Any, float]] = []
    if mode == "rank":
        est = build_method(method, seed=seed, n_classes=n_classes,
                           n_features_to_select=max(grid) if grid else None)
        if not grid:
            logger.warning("%s: every k exceeds the %d features; nothing to evaluate.",
                           task.dataset, p)
            return out
        fit_time = _timed_fit(est, X_tr, y_fit)
        order = feature_order(est)
        record_support(max(grid), est, order[: max(grid)])
        for k in grid:
            subsets.append((k, np.sort(order[:k]), None, fit_time))
    elif mode == "refit" and grid and "n_features_to_select" not in method.params and \
            hasattr(build_method(method, seed=seed, n_classes=n_classes), "fit_path"):
        # one shared fit for the whole grid (e.g. the class-specific ensemble: the per-class
        # rankings once, then one set of classifiers per k); equal to one fit per k
        est = build_method(method, seed=seed, n_classes=n_classes,
                           n_features_to_select=max(grid))
        start = time.perf_counter()
        models = est.fit_path(X_tr, y_fit, grid)
        fit_time = time.perf_counter() - start
        for k, fitted in zip(grid, models, strict=True):
            cols = np.flatnonzero(_support_of(fitted, p))
            record_support(k, fitted, cols)
            subsets.append((k, cols, fitted, fit_time))
    elif mode == "refit":
        for k in grid:
            est = build_method(method, seed=seed, n_classes=n_classes, n_features_to_select=k)
            fit_time = _timed_fit(est, X_tr, y_fit)
            cols = np.flatnonzero(_support_of(est, p))
            record_support(k, est, cols)
            subsets.append((k, cols, est, fit_time))
    elif mode == "own":
        est = build_method(method, seed=seed, n_classes=n_classes)
        fit_time = _timed_fit(est, X_tr, y_fit)
        cols = np.flatnonzero(_support_of(est, p))
        record_support(0, est, cols)
        subsets.append((0, cols, est, fit_time))  # k = 0: the method's own rule
    else:  # all
        est = build_method(method, seed=seed, n_classes=n_classes)
        fit_time = 0.0 if est is None else _timed_fit(est, X_tr, y_fit)
        subsets.append((p, np.arange(p), est, fit_time))

    # The downstream models are small: threads only add overhead (and contention on a shared
    # machine); parallelism comes from n_jobs.
    with threadpool_limits(limits=1):
        for k, cols, fitted, fit_time in subsets:
            add_selection(k, cols, fit_time)
            if spec.protocol == "supervised":
                _supervised(task, spec, k, cols, fitted, fit_time, X_tr, y_tr, X_te, y_te,
                            n_classes, seed, add, out, keep_predictions)
            elif outcome:
                _outcome_protocol(task, spec, k, cols, fit_time, X_tr, y_tr, X_te, y_te, add)
            elif spec.protocol == "unsupervised":
                _unsupervised(task, spec, k, cols, fit_time, X_te, y_te, n_classes, seed, add)
            else:
                _clustering(k, spec, fitted, fit_time, y_te, add)
    return out


def _supervised(task, spec, k, cols, fitted, fit_time, X_tr, y_tr, X_te, y_te, n_classes,
                seed, add, out, keep_predictions) -> None:
    if cols.shape[0] == 0:
        for e in spec.estimators:
            for m in spec.metrics:
                add(k, e.name, m, np.nan, fit_time)
        return
    Xs_tr = Xs_te = None
    for j, e in enumerate(spec.estimators):
        if e.name == "self":
            if fitted is None or not hasattr(fitted, "predict"):
                raise TypeError(
                    f"estimator 'self': method {spec.methods[task.i_method].display!r} has no "
                    "predict."
                )
            model, Xp = fitted, X_te
        else:
            if Xs_tr is None:
                Xs_tr, Xs_te = _columns(X_tr, cols), _columns(X_te, cols)
                if e.name == "nb" and sp.issparse(Xs_tr):
                    Xs_tr, Xs_te = Xs_tr.toarray(), Xs_te.toarray()
            est_seed = derive_seed(spec.seed, task.i_data, task.i_method, task.fold, 1, j)
            model = build_estimator(e, seed=est_seed, n_train=Xs_tr.shape[0],
                                    n_classes=n_classes)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", category=UserWarning)
                model.fit(Xs_tr, y_tr)
            Xp = Xs_te
        pred = np.asarray(model.predict(Xp)).astype(int, copy=False)
        scores = _class_scores(model, Xp, n_classes) if "roc_auc" in spec.metrics or \
            keep_predictions else None
        for metric, value in classification_metrics(y_te, pred, scores, spec.metrics).items():
            add(k, e.name, metric, value, fit_time)
        if keep_predictions and scores is not None:
            out.predictions[(task.dataset, spec.methods[task.i_method].display, e.name, int(k),
                             task.fold)] = (task.test, y_te, scores)


def _outcome_protocol(task, spec, k, cols, fit_time, X_tr, y_tr, X_te, y_te, add) -> None:
    """The regression and survival protocols: a model of the target on the selected features,
    fitted on the training rows, scored on the test rows (R² / RMSE, Harrell's C)."""
    from sparsefs.metrics import concordance_index, r2, rmse

    if cols.shape[0] == 0:
        for e in spec.estimators:
            for m in spec.metrics:
                add(k, e.name, m, np.nan, fit_time)
        return
    Xs_tr, Xs_te = _columns(X_tr, cols), _columns(X_te, cols)
    for j, e in enumerate(spec.estimators):
        est_seed = derive_seed(spec.seed, task.i_data, task.i_method, task.fold, 1, j)
        model = build_estimator(e, seed=est_seed, n_train=Xs_tr.shape[0], n_classes=None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=UserWarning)
            model.fit(Xs_tr, y_tr)
        pred = np.asarray(model.predict(Xs_te), dtype=np.float64).ravel()
        for m in spec.metrics:
            if m == "r2":
                value = r2(y_te, pred)
            elif m == "rmse":
                value = rmse(y_te, pred)
            else:
                value = concordance_index(y_te["time"], y_te["event"], pred)
            add(k, e.name, m, value, fit_time)


def _unsupervised(task, spec, k, cols, fit_time, X_te, y_te, n_classes, seed, add) -> None:
    from sparsefs.metrics import clustering_accuracy, normalized_mutual_info

    if cols.shape[0] == 0:
        for r in range(spec.n_runs):
            for m in spec.metrics:
                add(k, "kmeans", m, np.nan, fit_time, run=r)
        return
    Xs = _columns(X_te, cols)
    e = spec.estimators[0]
    for r in range(spec.n_runs):
        run_seed = derive_seed(spec.seed, task.i_data, task.i_method, task.fold, 2, r)
        km = build_estimator(e, seed=run_seed, n_train=Xs.shape[0], n_classes=n_classes)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning on duplicate points
            labels = km.fit_predict(Xs)
        values = {"acc": clustering_accuracy(y_te, labels),
                  "nmi": normalized_mutual_info(y_te, labels)}
        for m in spec.metrics:
            add(k, "kmeans", m, values[m], fit_time, run=r)


def _clustering(k, spec, fitted, fit_time, y_all, add) -> None:
    from sparsefs.metrics import (
        clustering_accuracy,
        clustering_error_rate,
        normalized_mutual_info,
    )

    if fitted is None:
        raise TypeError("the clustering protocol needs a clusterer for every method.")
    labels = getattr(fitted, "labels_", None)
    if labels is None:
        raise TypeError(f"{type(fitted).__name__} has no labels_ after fit; not a clusterer.")
    labels = np.asarray(labels)
    values = {
        "cer": clustering_error_rate(y_all, labels),
        "acc": clustering_accuracy(y_all, labels),
        "nmi": normalized_mutual_info(y_all, labels),
    }
    for m in spec.metrics:
        add(k, "self", m, values[m], fit_time)

