"""Study: how SMBA's ranking depends on alpha (the lambda scale), the affine constraint and
centring, leak-free, on the microarray sets, against Fisher's score (issue #16, item 4).

Protocol (every number is computed inside the cross-validation folds; nothing sees a test row):

* data: ALLAML (72 x 7129, 2 classes), LEUKEMIA (72 x 7070, 2), LUNG_D (73 x 325, 7), DLBCL
  (``lymphoma.mat``, 96 x 4026, 9) from ``SPARSEFS_DATA``; a set that is absent is skipped
  and said so;
* ``StratifiedKFold(n_splits=3, shuffle=True, random_state=0)`` (3 folds to keep the run
  within ~10 minutes on a shared 2-core machine; DLBCL's two 2-sample classes then miss a
  fold, which scikit-learn warns about);
* in each fold: z-score with the training rows' statistics, fit the selector on the training
  rows only (SMBA ignores the labels; Fisher uses them), keep the top m features, train a
  linear SVM (``SVC(kernel="linear", C=1)``, the paper's classifier) on them, score the test
  rows; m in {10, 20, 50};
* reported: the accuracy at m = 20 (mean over folds) per data set, and the mean over data
  sets and the three m of the accuracy ("mean"); a random choice of m features (mean of 5
  draws per fold, seeded) and all features are the floor and ceiling;
* the premise check ("anchors"): features that are convex combinations of 10 anchor features
  (60 samples, 400 features, noise 0.05, 3 seeds): anchors among SMBA's top 10, out of 30;
* the embedded default data ("embedded", ``sparsefs.datasets.load_default``: 13 real wine
  features among 500, the others permuted real columns; z-scored): real features among the
  top 13 (issue #16 saw 0/13 at alpha = 10).

The SMBA grid: ``alpha`` in {1, 2, 5, 10, 50} with the affine constraint (where centring changes
nothing but lambda_max), and ``alpha`` in {2, 10, 50} without it, centred or not. The
default chosen from it (``alpha=2``, affine, not centred) and the former default
(``alpha=10``) are marked.

Run: ``python benchmarks/study_smba_sensitivity.py [--quick] [--write-docs]``. ``--quick``:
LUNG_D only, 2 folds. ``--write-docs`` replaces the block between the ``smba-sensitivity``
markers in ``docs/methods/smba.md`` with the table (and the run's wall time).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

DATASETS = [("ALLAML", "ALLAML"), ("LEUKEMIA", "leukemia"), ("LUNG_D", "lung_discrete"),
            ("DLBCL", "lymphoma")]
M_VALUES = (10, 20, 50)
SEED = 0
N_RANDOM = 5
GRID = (
    [{"alpha": a, "affine": True, "center": False} for a in (1.0, 2.0, 5.0, 10.0, 50.0)]
    + [{"alpha": a, "affine": False, "center": c} for c in (False, True)
       for a in (2.0, 10.0, 50.0)]
)
DEFAULT = {"alpha": 2.0, "affine": True, "center": False}
FORMER = {"alpha": 10.0, "affine": True, "center": False}  # the default before this study
DOC = Path(__file__).resolve().parent.parent / "docs" / "methods" / "smba.md"
BEGIN, END = "<!-- smba-sensitivity:begin -->", "<!-- smba-sensitivity:end -->"


def label(cfg: dict) -> str:
    text = f"SMBA alpha={cfg['alpha']:g}, " + ("affine" if cfg["affine"] else "no affine")
    if not cfg["affine"]:
        text += ", centred" if cfg["center"] else ", not centred"
    return text + (" (default)" if cfg == DEFAULT else " (former default)" if cfg == FORMER
                   else "")


def anchor_design(seed: int):
    rng = np.random.default_rng(seed)
    n, a, M = 60, 10, 400
    A = rng.standard_normal((n, a))
    W = rng.dirichlet(np.full(a, 0.5), size=M - a).T
    X = np.hstack([A, A @ W]) + 0.05 * rng.standard_normal((n, M))
    perm = rng.permutation(M)
    return X[:, perm], np.flatnonzero(perm < a)


def anchors_found(cfg: dict) -> int:
    from sparsefs.selection import SMBA

    found = 0
    for seed in range(3):
        X, anchors = anchor_design(seed)
        est = SMBA(**cfg).fit(X)
        found += len(set(np.argsort(est.ranking_)[:10]) & set(anchors))
    return found


def embedded_found(cfg: dict) -> int:
    from sparsefs.datasets import load_default
    from sparsefs.selection import SMBA

    ds = load_default()
    X = np.asarray(ds.X, dtype=np.float64)
    sd = X.std(0)
    sd[sd == 0] = 1.0
    est = SMBA(n_features_to_select=13, **cfg).fit((X - X.mean(0)) / sd)
    return int((est.support_ & np.asarray(ds.support)).sum())


def evaluate(X, y, n_splits, methods):
    """Fold-mean accuracy for every method and m: {name: {m: acc}} (leak-free)."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import SVC

    cv = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=SEED)
    acc = {name: {m: [] for m in M_VALUES} for name in methods}
    acc["all features"] = {m: [] for m in M_VALUES}
    rng = np.random.default_rng(SEED)
    for train, test in cv.split(X, y):
        mu, sd = X[train].mean(0), X[train].std(0)
        sd[sd == 0] = 1.0
        Xtr, Xte = (X[train] - mu) / sd, (X[test] - mu) / sd
        svm_all = SVC(kernel="linear", C=1.0).fit(Xtr, y[train])
        full = float((svm_all.predict(Xte) == y[test]).mean())
        for m in M_VALUES:
            acc["all features"][m].append(full)
        for name, rank in methods.items():
            order = rank(Xtr, y[train], rng)
            for m in M_VALUES:
                scores = []
                for cols in order(m):
                    svm = SVC(kernel="linear", C=1.0).fit(Xtr[:, cols], y[train])
                    scores.append(float((svm.predict(Xte[:, cols]) == y[test]).mean()))
                acc[name][m].append(float(np.mean(scores)))
    return {name: {m: float(np.mean(v)) for m, v in d.items()} for name, d in acc.items()}


def make_methods():
    from sparsefs.selection import SMBA, FisherScore

    def smba(cfg):
        def rank(Xtr, ytr, rng):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = SMBA(**cfg).fit(Xtr)
            order = np.argsort(est.ranking_)
            return lambda m: [order[:m]]
        return rank

    def fisher(Xtr, ytr, rng):
        order = np.argsort(FisherScore().fit(Xtr, ytr).ranking_)
        return lambda m: [order[:m]]

    def random(Xtr, ytr, rng):
        draws = [rng.permutation(Xtr.shape[1]) for _ in range(N_RANDOM)]
        return lambda m: [d[:m] for d in draws]

    methods = {"Fisher score": fisher, "random features": random}
    for cfg in GRID:
        methods[label(cfg)] = smba(cfg)
    return methods


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="LUNG_D only, 2 folds")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the table into docs/methods/smba.md")
    args = parser.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits

        from sparsefs.datasets import fetch_asu
    except ImportError as exc:  # pragma: no cover - a broken environment
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not os.environ.get("SPARSEFS_DATA"):
        print("error: set SPARSEFS_DATA to the shared data folder", file=sys.stderr)
        return 2
    start = time.perf_counter()
    n_splits = 2 if args.quick else 3
    sets = [d for d in DATASETS if d[0] == "LUNG_D"] if args.quick else DATASETS
    methods = make_methods()
    results, skipped = {}, []
    with threadpool_limits(limits=1):
        for name, file in sets:
            try:
                ds = fetch_asu(file, download=False)
            except (FileNotFoundError, OSError) as exc:
                skipped.append(f"{name} ({exc})")
                continue
            X = np.asarray(ds.X, dtype=np.float64)
            y = np.asarray(ds.y)
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # DLBCL: classes smaller than n_splits
                results[name] = evaluate(X, y, n_splits, methods)
            print(f"  {name} {X.shape[0]}x{X.shape[1]}: {time.perf_counter() - t:.0f} s",
                  file=sys.stderr, flush=True)
        anchors, embedded = {}, {}
        for cfg in GRID:
            anchors[label(cfg)] = anchors_found(cfg)
            embedded[label(cfg)] = embedded_found(cfg)
    names = list(results)
    rows = []
    for method in [*methods, "all features"]:
        cells = [f"{100 * results[d][method][20]:.1f}" for d in names]
        mean = 100 * np.mean([results[d][method][m] for d in names for m in M_VALUES])
        anc, emb = anchors.get(method), embedded.get(method)
        rows.append((method, cells, mean, "" if anc is None else f"{anc}/30",
                     "" if emb is None else f"{emb}/13"))
    elapsed = time.perf_counter() - start
    lines = [
        f"Leak-free {n_splits}-fold CV (selection and z-scoring inside the folds), linear SVM "
        f"(C = 1) on the top m features; cells: accuracy % at m = 20; mean: over the data "
        f"sets and m in {{10, 20, 50}}; anchors: anchor features among the top 10 on the "
        f"convex-combination design (3 seeds x 10); embedded: real features among the top 13 "
        f"on the embedded default data (z-scored). Run: `python "
        f"benchmarks/study_smba_sensitivity.py{' --quick' if args.quick else ''}`, "
        f"{elapsed:.0f} s on one BLAS thread.",
        "",
        "| method | " + " | ".join(names) + " | mean | anchors | embedded |",
        "|---" * (len(names) + 4) + "|",
    ]
    for method, cells, mean, anc, emb in rows:
        lines.append(f"| {method} | " + " | ".join(cells) + f" | {mean:.1f} | {anc} | {emb} |")
    if skipped:
        lines += ["", "Skipped (not found): " + ", ".join(skipped)]
    table = "\n".join(lines)
    print(table)
    if args.write_docs:
        text = DOC.read_text()
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            _, tail = rest.split(END, 1)
            DOC.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")
        else:
            DOC.write_text(text.rstrip("\n") + f"\n\n{BEGIN}\n{table}\n{END}\n")
        print(f"written to {DOC}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
