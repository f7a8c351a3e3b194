"""Which default for SparseKOSClassifier? Evidence on the paper's designs, ALLAML and
scikit-learn's checks (issue #31 row 11, issue #33's sparse-KOS row).

A candidate default (``--candidate``, a dict of parameters; default
``{"sigma2_selection": "kos"}``) is run on the very splits of the stored reproduction
(``docs/reproductions/sparse_kos/``: Simulations 1 and 2, blood transfusion, climate crashes,
credit default, 20 stratified 2/3 - 1/3 splits each, the same per-split seeds: the candidate
takes the place of the stored "sparse KOS", the paper's tuning, as method 0) and compared with
the paper's tuning split by split: the selected features (identical supports, frequencies),
the reproduction's own feature claims (the hooks of ``configs/sparse_kos.toml`` judged on the
candidate's selections), test error, and CPU seconds per fit. Then one fit of each on ALLAML
(72 x 7129) and, with ``--checks``, scikit-learn's ``check_estimator`` of each default
(CPU seconds: on a shared machine the CPU time, one BLAS thread, is what a quiet machine's
wall time would be).

    python benchmarks/study_sparse_kos_default.py [--quick] [--checks] [--datasets a,b]

``--quick``: 4 splits, no credit default; ``--splits N``: the first N splits (the same
seeds). Needs ``$SPARSEFS_DATA`` (or ../shared/data) for the
UCI sets and ALLAML (skipped when absent).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import ast
import dataclasses
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from sparsefs.harness import MethodSpec, ReproductionSpec, Results, run
from sparsefs.harness._claims import _evaluate
from sparsefs.harness._results import Reproduction

REPO = Path(__file__).resolve().parents[1]
STORED = REPO / "docs" / "reproductions" / "sparse_kos"
# the paper's tuning and its plain Algorithm 1 (what the stored reproduction ran)
PAPER = {"sigma2_selection": "joint", "acceleration": "none"}
FEATURE_CLAIMS = ("sim1_features", "sim1_unit_weights", "sim2_features", "blood_weights",
                  "climate_features", "credit_features")


def _experiments(spec: ReproductionSpec, candidate: dict, quick: bool, only: set | None,
                 splits: int | None = None):
    out = []
    for exp in spec.experiments:
        datasets = [d for d in exp.datasets if only is None or d.display in only]
        if quick:
            datasets = [d for d in datasets if d.display != "credit default"]
        if not datasets:
            continue
        method = MethodSpec(stem="sparse_kos", label="sparse KOS", params=candidate, mode="own")
        n_repeats = splits or (4 if quick else exp.cv.n_repeats)
        cv = dataclasses.replace(exp.cv, n_repeats=n_repeats)
        out.append(dataclasses.replace(exp, datasets=datasets, methods=[method], cv=cv))
    return out


def _per_split(res: Results, dataset: str) -> pd.DataFrame:
    sup = res.supports[(res.supports["dataset"] == dataset)
                       & (res.supports["method"] == "sparse KOS")]
    return sup.pivot_table(index="fold", columns="feature", values="selected",
                           aggfunc="first").astype(bool)


def _errors(res: Results, dataset: str) -> pd.Series:
    t = res.table
    t = t[(t["dataset"] == dataset) & (t["method"] == "sparse KOS") & (t["metric"] == "error")]
    return t.groupby("fold")["value"].first()


def _fit_times(res: Results, dataset: str) -> pd.Series:
    t = res.table
    t = t[(t["dataset"] == dataset) & (t["method"] == "sparse KOS")
          & (t["metric"] == "fit_time")]
    return t.groupby("fold")["value"].first()


def _allaml(candidate: dict) -> list[dict]:
    from sparsefs.classification import SparseKOSClassifier
    from sparsefs.datasets import fetch_asu

    try:
        ds = fetch_asu("ALLAML", download=False)
    except (FileNotFoundError, OSError) as exc:
        print(f"ALLAML skipped: {exc}", file=sys.stderr)
        return []
    rows, supports = [], {}
    for name, params in (("paper", PAPER), ("candidate", candidate)):
        c0, w0 = time.process_time(), time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = SparseKOSClassifier(random_state=0, **params).fit(ds.X, ds.y)
        supports[name] = clf.support_
        rows.append({"tuning": name, "cpu_s": time.process_time() - c0,
                     "wall_s": time.perf_counter() - w0, "n_selected": int(clf.support_.sum()),
                     "sigma2": clf.sigma2_, "alpha/alpha_max": clf.alpha_ / clf.alpha_max_,
                     "objective": float(clf.objective_[-1]),
                     "cv_error": float(np.nanmin(clf.sigma2_cv_errors_))
                     if clf.sigma2_cv_errors_ is not None else None})
    a, b = supports["paper"], supports["candidate"]
    for r in rows:
        r["jaccard_vs_paper"] = float((a & b).sum() / max(1, (a | b).sum()))
    return rows


def _checks(candidate: dict) -> list[dict]:
    from sklearn.base import clone
    from sklearn.utils.estimator_checks import _yield_all_checks

    from sparsefs.classification import SparseKOSClassifier

    rows = []
    for name, params in (("paper", PAPER), ("candidate", candidate)):
        est = SparseKOSClassifier(**params)
        c0, w0 = time.process_time(), time.perf_counter()
        for check in _yield_all_checks(est, legacy=True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    check(type(est).__name__, clone(est))
                except Exception as exc:
                    if type(exc).__name__ != "SkipTest":
                        raise
        rows.append({"tuning": name, "check_estimator_cpu_s": time.process_time() - c0,
                     "check_estimator_wall_s": time.perf_counter() - w0})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidate", default="{'sigma2_selection': 'kos'}")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--checks", action="store_true", help="also time check_estimator")
    parser.add_argument("--no-allaml", action="store_true")
    parser.add_argument("--datasets", help="comma-separated data set labels")
    parser.add_argument("--splits", type=int,
                        help="the first N splits of each data set (default: all, 4 with --quick)")
    parser.add_argument("--out", help="write the JSON here too")
    parser.add_argument("--save", help="a folder for the candidate's results (csv.gz)")
    args = parser.parse_args()
    candidate = ast.literal_eval(args.candidate)
    only = set(args.datasets.split(",")) if args.datasets else None
    spec = ReproductionSpec.from_toml(REPO / "configs" / "sparse_kos.toml")
    start = time.perf_counter()
    results, summary = [], []
    for exp in _experiments(spec, candidate, args.quick, only, args.splits):
        stored = Results.load(STORED / f"{exp.name}.csv.gz")
        print(f"running {exp.name}: {[d.display for d in exp.datasets]}", file=sys.stderr)
        c0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = run(exp, progress=sys.stderr.isatty())
        print(f"  {time.process_time() - c0:.0f} CPU s", file=sys.stderr)
        results.append(res)
        for d in exp.datasets:
            new, old = _per_split(res, d.display), _per_split(stored, d.display)
            folds = new.index.intersection(old.index)
            same = int((new.loc[folds] == old.loc[folds]).all(axis=1).sum())
            err_new, err_old = _errors(res, d.display), _errors(stored, d.display)
            summary.append({
                "dataset": d.display, "splits": len(folds), "identical_supports": same,
                "freq_paper": np.round(old.loc[folds].mean().to_numpy(), 2).tolist(),
                "freq_candidate": np.round(new.loc[folds].mean().to_numpy(), 2).tolist(),
                "error_paper": float(err_old.loc[folds].mean()),
                "error_candidate": float(err_new.loc[folds].mean()),
                "fit_s_paper_stored": float(_fit_times(stored, d.display).mean()),
                "fit_s_candidate": float(_fit_times(res, d.display).mean()),
            })
    for row in summary:
        print(f"\n{row['dataset']}: {row['identical_supports']}/{row['splits']} splits with the "
              f"same selected features; test error paper {row['error_paper']:.3f}, candidate "
              f"{row['error_candidate']:.3f}; fit s (stored paper run / candidate, wall) "
              f"{row['fit_s_paper_stored']:.2f} / {row['fit_s_candidate']:.2f}")
        print(f"  selection frequency per feature, paper:     {row['freq_paper']}")
        print(f"  selection frequency per feature, candidate: {row['freq_candidate']}")
    if args.save:
        for res in results:
            res.save(Path(args.save) / f"{res.meta['experiment']}.csv.gz")
    verdicts = []
    if results and not args.quick:
        stored = [Results.load(STORED / f"{r.meta['experiment']}.csv.gz") for r in results]
        for name, res in (("paper", stored), ("candidate", results)):
            repro = Reproduction(spec=spec, results=res)
            for claim in spec.claims:
                if claim.id not in FEATURE_CLAIMS:
                    continue
                if not any(claim.args.get("experiment") == r.meta["experiment"] for r in res):
                    continue
                row = _evaluate(claim, repro)
                verdicts.append({"tuning": name, "claim": claim.id, "verdict": row.verdict,
                                 "ours": row.ours})
                print(f"claim {claim.id} ({name}): {row.verdict} ({row.ours})")
    allaml = [] if args.no_allaml else _allaml(candidate)
    for r in allaml:
        print(f"ALLAML {r['tuning']}: {r['cpu_s']:.1f} CPU s ({r['wall_s']:.1f} s wall), "
              f"{r['n_selected']} selected, sigma2 {r['sigma2']:.1f}, lambda/lambda_max "
              f"{r['alpha/alpha_max']:.3f}, objective {r['objective']:.6f}, Jaccard vs paper "
              f"{r['jaccard_vs_paper']:.3f}")
    checks = _checks(candidate) if args.checks else []
    for r in checks:
        print(f"check_estimator {r['tuning']}: {r['check_estimator_cpu_s']:.1f} CPU s "
              f"({r['check_estimator_wall_s']:.1f} s wall)")
    payload = {"candidate": candidate, "splits": summary, "claims": verdicts,
               "allaml": allaml, "checks": checks, "loadavg": os.getloadavg(),
               "wall_s": time.perf_counter() - start}
    text = json.dumps(payload, default=float)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print("BENCH_JSON " + text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
