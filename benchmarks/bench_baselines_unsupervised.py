"""Benchmark: sparsefs unsupervised baselines vs scikit-feature (LS, SPEC, MCFS, UDFS, NDFS).

Times ``LaplacianScore``, ``SPEC``, ``MCFS``, ``UDFS`` and ``NDFS`` from
``sparsefs.selection`` (``n_features_to_select=20``, ``n_clusters=3`` where the method has
clusters) against the optional benchmark-only peer ``skfeature-chappers`` (GPL-2, used as a
black box, never vendored): ``lap_score``, ``SPEC.spec``, ``MCFS.mcfs``, ``UDFS.udfs`` and
``NDFS.ndfs``, called as `specs/peers.md` §4.1 says (``mode="index"``, a fresh copy of X
per call, made outside the timing), all in the same run on the same data: 100 x 2000, 3
classes, 20 planted features at random columns (``make_planted_classification``, shift 1.5,
seed 0; the labels are not used). For each method the hits (planted features in the top 20)
are reported.

Targets (issue #9): UDFS >= 100x faster than skfeature, NDFS >= 10x. skfeature's UDFS takes
about 220 s, so it is timed once (repeat 1, no warm-up), and ``--quick`` skips it. The full
run also times sparsefs alone on larger shapes (100 x 20000, 2000 x 500) to show the scaling
of the small-dimension solvers.

Run: ``python benchmarks/bench_baselines_unsupervised.py [--quick] [--repeat N] [--out FILE]``.
"""

from __future__ import annotations

import sys
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import (
    BenchRun,
    LoadMonitor,
    bench_parser,
    call_peak_memory,
    emit_json,
    fl_flag,
    print_table,
    repeat_for,
    time_call,
)

K_SELECT = 20
N_CLASSES = 3
SEED = 0
TARGETS = {"udfs": 100.0, "ndfs": 10.0}  # speed-up over skfeature (issue #9)
SLOW_PEERS = {"udfs", "ndfs"}  # timed once: 220 s and ~14 s per call (peers.md 4.1)
SCALING_SHAPES = [(100, 20_000), (2_000, 500)]


def planted(n: int, p: int):
    from sparsefs.datasets import make_planted_classification

    data = make_planted_classification(
        n_samples=n, n_features=p, n_informative=K_SELECT, n_classes=N_CLASSES,
        random_state=SEED,
    )
    return data.X, np.flatnonzero(data.support)


def sparsefs_methods():
    from sparsefs.selection import MCFS, NDFS, SPEC, UDFS, LaplacianScore

    k, c = K_SELECT, N_CLASSES
    return {
        "laplacian_score": lambda X: LaplacianScore(k).fit(X),
        "spec": lambda X: SPEC(k).fit(X),
        "mcfs": lambda X: MCFS(k, n_clusters=c).fit(X),
        "udfs": lambda X: UDFS(k, n_clusters=c).fit(X),
        "ndfs": lambda X: NDFS(k, n_clusters=c, random_state=SEED).fit(X),
    }


def load_skfeature():
    """{method: callable returning a best-first index order}, and the version or a reason."""
    try:
        from skfeature.function.similarity_based import SPEC as sk_spec
        from skfeature.function.similarity_based import lap_score as sk_lap
        from skfeature.function.sparse_learning_based import MCFS as sk_mcfs
        from skfeature.function.sparse_learning_based import NDFS as sk_ndfs
        from skfeature.function.sparse_learning_based import UDFS as sk_udfs
    except Exception as exc:  # optional peer: any failure means "skip"
        return None, f"not importable ({type(exc).__name__})"
    try:
        version = metadata.version("skfeature-chappers")
    except metadata.PackageNotFoundError:
        version = "unknown"
    c = N_CLASSES
    peers = {
        "laplacian_score": lambda X: sk_lap.lap_score(X, mode="index"),
        "spec": lambda X: sk_spec.spec(X, mode="index"),
        "mcfs": lambda X: sk_mcfs.mcfs(X, n_selected_features=K_SELECT, n_clusters=c,
                                       mode="index"),
        "udfs": lambda X: sk_udfs.udfs(X, n_clusters=c, mode="index"),
        "ndfs": lambda X: sk_ndfs.ndfs(X, n_clusters=c, mode="index"),
    }
    return peers, version


def order_of(scores: np.ndarray) -> np.ndarray:
    return np.argsort(-np.asarray(scores, dtype=float), kind="stable")


def hits(order: np.ndarray, informative: np.ndarray) -> int:
    return int(np.isin(np.asarray(order)[:K_SELECT], informative).sum())


def rank_corr(order_a: np.ndarray, order_b: np.ndarray) -> float:
    p = len(order_a)
    ra, rb = np.empty(p), np.empty(p)
    ra[np.asarray(order_a)] = np.arange(p)
    rb[np.asarray(order_b)] = np.arange(p)
    return float(spearmanr(ra, rb).statistic)


def main(argv=None) -> int:
    parser = bench_parser(__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    repeat = repeat_for(args)
    try:
        ours = sparsefs_methods()
    except ImportError as exc:
        print(f"error: cannot import sparsefs.selection: {exc}", file=sys.stderr)
        return 2
    peers, sk_info = load_skfeature()
    run = BenchRun("baselines_unsupervised", args)

    X, informative = planted(100, 2_000)
    # UDFS is not scale invariant (it standardises by default): also report X standardised by
    # the caller and UDFS(standardize=False)
    Xz = (X - X.mean(0)) / X.std(0)

    def fresh():
        return X.copy()

    rows = []
    for name, fit in ours.items():
        print(f"  sparsefs {name} ...", file=sys.stderr, flush=True)
        mon = LoadMonitor().start()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_ours = time_call(fit, setup=fresh, repeat=repeat, warmup=args.warmup, name=name)
        mem = call_peak_memory(fit, setup=fresh)
        est = t_ours.result
        row = {
            "method": name,
            "sparsefs_s": t_ours.median,
            "hits_sparsefs": hits(order_of(est.scores_), informative),
            "mem_sparsefs_mib": mem["traced_mib"],
            "n_iter": getattr(est, "n_iter_", None),
            "timings": {"sparsefs": t_ours.to_dict()},
        }
        if name == "udfs":
            from sparsefs.selection import UDFS

            z = fit(Xz.copy())
            row["hits_sparsefs_standardised"] = hits(order_of(z.scores_), informative)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                raw = UDFS(K_SELECT, n_clusters=N_CLASSES, standardize=False).fit(X.copy())
            row["hits_sparsefs_unstandardised"] = hits(order_of(raw.scores_), informative)
        skip = peers is None or (args.quick and name == "udfs")
        if not skip:
            print(f"  skfeature {name} ...", file=sys.stderr, flush=True)
            slow = name in SLOW_PEERS
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_peer = time_call(
                    peers[name], setup=fresh, repeat=1 if slow else repeat,
                    warmup=0 if slow else args.warmup, name=f"skfeature_{name}",
                )
            sk_order = np.asarray(t_peer.result)
            row.update(
                skfeature_s=t_peer.median,
                ratio=t_peer.median / t_ours.median,
                hits_skfeature=hits(sk_order, informative),
                spearman_vs_skfeature=rank_corr(order_of(est.scores_), sk_order)
                if sk_order.shape[0] == X.shape[1] else None,
            )
            row["timings"]["skfeature"] = t_peer.to_dict()
        else:
            row["skfeature_s"] = None
            row["skfeature_note"] = "skipped (--quick)" if peers is not None else sk_info
        load = mon.stop()
        row["fl"], row["fl_coarse"] = load["fl"], load["fl_coarse"]
        target = TARGETS.get(name)
        row["target"] = target
        row["target_met"] = None if target is None or "ratio" not in row else (
            row["ratio"] >= target
        )
        rows.append(row)

    scaling = []
    if not args.quick:
        for n, p in SCALING_SHAPES:
            Xs, inf_s = planted(n, p)
            for name, fit in ours.items():
                print(f"  sparsefs {name} at {n}x{p} ...", file=sys.stderr, flush=True)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = time_call(fit, setup=Xs.copy, repeat=1, warmup=0, name=name)
                scaling.append({
                    "shape": f"{n}x{p}", "method": name, "sparsefs_s": t.median,
                    "hits_sparsefs": hits(order_of(t.result.scores_), inf_s),
                    "fl": t.fl, "timing": t.to_dict(),
                })

    for r in rows:
        r["hits"] = f"{r['hits_sparsefs']}/{r.get('hits_skfeature', '-')}"
        if "hits_sparsefs_standardised" in r:
            r["hits"] += (f" (std X: {r['hits_sparsefs_standardised']}; standardize=False: "
                          f"{r['hits_sparsefs_unstandardised']})")
        r["goal"] = (
            "-" if r["target"] is None
            else f">= {r['target']:g}x: " + ("MET" if r["target_met"] else
                                             "not measured" if r["target_met"] is None
                                             else "NOT MET")
        )
        flag = fl_flag(r["fl"], r["fl_coarse"])
        r["fl_shown"] = None if r["fl"] is None else (
            f"{r['fl']:.3f}" + ("~" if r["fl_coarse"] else "") + (" HIGH" if flag else "")
        )
    print(
        f"\nUnsupervised baselines on 100 x 2000 (3 classes, {K_SELECT} planted features at "
        f"random columns, seed {SEED}); sparsefs: median of {repeat} after {args.warmup} "
        f"warm-up; skfeature: UDFS and NDFS timed once, the others like sparsefs; fresh copy "
        f"of X per call. ratio = skfeature time / sparsefs time. skfeature: {sk_info}\n"
    )
    print_table(
        rows,
        [
            ("method", "method"),
            ("sparsefs_s", "sparsefs s"),
            ("skfeature_s", "skfeature s"),
            ("ratio", "ratio"),
            ("goal", "target"),
            ("hits", f"hits@{K_SELECT} sfs/skf"),
            ("spearman_vs_skfeature", "rank corr."),
            ("mem_sparsefs_mib", "sfs MiB"),
            ("n_iter", "n_iter"),
            ("fl_shown", "fl (~ coarse)"),
        ],
    )
    if scaling:
        print()
        print_table(
            scaling,
            [("shape", "shape"), ("method", "method"), ("sparsefs_s", "sparsefs s"),
             ("hits_sparsefs", f"hits@{K_SELECT}")],
            title="sparsefs alone on larger shapes (one call each)",
        )
    missed = [r["method"] for r in rows if r["target_met"] is False]
    print()
    print("targets: " + ("all measured targets met." if not missed else
                         f"NOT met for: {', '.join(missed)}"))
    for r in rows:
        for k in ("hits", "goal", "fl_shown"):
            r.pop(k)
    payload = run.finish({
        "peers": {"skfeature": sk_info if peers is None else f"skfeature-chappers {sk_info}"},
        "k_select": K_SELECT,
        "n_classes": N_CLASSES,
        "seed": SEED,
        "targets": TARGETS,
        "targets_missed": missed,
        "results": rows,
        "scaling": scaling,
    })
    flag = payload["load"]["load_flag"]
    print(
        f"machine load over the run: fl={payload['load']['fl']}, loadavg "
        f"{payload['load']['loadavg_before']} -> {payload['load']['loadavg_after']}"
        + (f"  !!! {flag}" if flag else "")
    )
    emit_json(payload, out=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
