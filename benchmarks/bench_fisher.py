"""Benchmark: sparsefs FisherScore vs sklearn f_classif (and skfeature, if importable).

Times ``sparsefs.selection.FisherScore(n_features_to_select=20).fit(X, y)`` against
``sklearn.feature_selection.f_classif(X, y)`` and, when the optional benchmark-only peer
``skfeature-chappers`` is importable, ``skfeature`` ``fisher_score(X, y, mode="index")``
(its only correct output mode; peers.md section 4.1), all in the same run on the same
seeded data. Every call gets a fresh copy of X, made outside the timing.

Checks that sparsefs ranks the features exactly as f_classif does (the Fisher score is a
monotone function of the ANOVA F statistic). A disagreement is printed loudly, recorded
in the JSON, and makes the script exit with status 1 (after the JSON line).

Informal expectation: sparsefs is not slower than f_classif by more than 2x.

Run: ``python benchmarks/bench_fisher.py [--quick] [--repeat N] [--out FILE]``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.stats import spearmanr
from sklearn.feature_selection import f_classif

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

N_CLASSES = 3
N_INFORMATIVE = 20
K_SELECT = 20
SEED = 0
# Tolerance for "same order": sorted by sparsefs, the F values must be non-increasing up
# to this relative rounding slack (near-ties may swap; anything else is a disagreement).
REL_TIE = 1e-9
MAX_SLOWDOWN = 2.0  # informal expectation vs f_classif


@dataclass(frozen=True)
class Case:
    n: int
    p: int
    density: float | None = None  # None: dense float64; else CSR at this density

    @property
    def label(self) -> str:
        kind = "dense" if self.density is None else f"csr {self.density:.0%}"
        return f"{self.n}x{self.p} {kind}"


FULL_CASES = [
    Case(100, 2_000),
    Case(100, 20_000),
    Case(1_000, 2_000),
    Case(2_000, 2_000),
    Case(2_000, 20_000, 0.01),
]
QUICK_CASES = [Case(100, 2_000), Case(100, 20_000), Case(1_000, 2_000), Case(1_000, 10_000, 0.01)]


# --------------------------------------------------------------------------- data


def make_dense(n: int, p: int, seed: int = SEED):
    """Gaussian noise, balanced-ish 3 classes, 20 informative columns at random indices.

    In each informative column the three classes are shifted by a permutation of
    (-1.5, 0, +1.5).
    """
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % N_CLASSES)
    X = rng.standard_normal((n, p))
    informative = rng.choice(p, N_INFORMATIVE, replace=False)
    base = 1.5 * (np.arange(N_CLASSES) - (N_CLASSES - 1) / 2)
    offsets = np.array([rng.permutation(base) for _ in informative])  # (m, K)
    X[:, informative] += offsets[:, y].T
    return X, y, np.sort(informative)


def make_csr(n: int, p: int, density: float, seed: int = SEED):
    """Sparse non-negative counts-like data (exponential values at random positions) with
    20 informative columns whose per-class density and scale differ (CSR, float64)."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % N_CLASSES)
    nnz = round(n * p * density)
    rows = [rng.integers(0, n, nnz)]
    cols = [rng.integers(0, p, nnz)]
    vals = [rng.exponential(1.0, nnz)]
    informative = rng.choice(p, N_INFORMATIVE, replace=False)
    for j in informative:
        level = rng.permutation(N_CLASSES)  # 0, 1, 2 in a random class order
        for k in range(N_CLASSES):
            members = np.flatnonzero(y == k)
            hit = members[rng.random(members.size) < 0.1 * (1 + level[k])]
            rows.append(hit)
            cols.append(np.full(hit.size, j))
            vals.append(rng.exponential(1.0 + level[k], hit.size))
    X = sp.coo_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, p)
    ).tocsr()
    X.sum_duplicates()
    return X, y, np.sort(informative)


# --------------------------------------------------------------------------- peers


def load_skfeature():
    """skfeature's fisher_score function and package version, or (None, reason)."""
    try:
        from skfeature.function.similarity_based.fisher_score import fisher_score
    except Exception as exc:  # optional peer: any failure means "skip"
        return None, f"not importable ({type(exc).__name__})"
    try:
        version = metadata.version("skfeature-chappers")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return fisher_score, version


# --------------------------------------------------------------------------- checks


def order_of(scores: np.ndarray) -> np.ndarray:
    """Best-first feature order (NaN last), stable."""
    s = np.where(np.isnan(scores), -np.inf, scores)
    return np.argsort(-s, kind="stable")


def compare_order(order: np.ndarray, F: np.ndarray) -> dict:
    """Compare a best-first order with f_classif's F statistic.

    ``identical``: same argsort as F. ``valid``: F is non-increasing along ``order`` up to
    REL_TIE relative slack (so only near-ties are swapped). ``spearman``: rank correlation
    between the two orders.
    """
    Fs = np.where(np.isnan(F), -np.inf, F)
    ref = order_of(F)
    p = Fs.size
    rank_a = np.empty(p)
    rank_a[order] = np.arange(p)
    rank_b = np.empty(p)
    rank_b[ref] = np.arange(p)
    along = Fs[order]
    finite = np.isfinite(along[:-1]) & np.isfinite(along[1:])
    slack = REL_TIE * np.maximum(np.abs(along[:-1]), np.abs(along[1:])) + 1e-300
    steps_ok = np.where(finite, along[1:] <= along[:-1] + slack, along[1:] <= along[:-1])
    identical = bool(np.array_equal(order, ref))
    rho = 1.0 if identical else float(spearmanr(rank_a, rank_b).statistic)
    return {
        "identical": identical,
        "valid": bool(steps_ok.all()),
        "n_positions_differ": int((order != ref).sum()),
        "spearman": rho,
        "topk_same": bool(set(order[:K_SELECT]) == set(ref[:K_SELECT])),
    }


def agrees(cmp: dict) -> bool:
    return cmp["identical"] or cmp["valid"] or cmp["spearman"] == 1.0


def hits(order: np.ndarray, informative: np.ndarray) -> int:
    return int(np.isin(order[:K_SELECT], informative).sum())


# --------------------------------------------------------------------------- main


def run_case(case: Case, FisherScore, sk_fisher, repeat: int, warmup: int) -> dict:
    if case.density is None:
        X, y, informative = make_dense(case.n, case.p)
    else:
        X, y, informative = make_csr(case.n, case.p, case.density)

    def fresh():
        return X.copy()

    def fit_sparsefs(Xc):
        return FisherScore(n_features_to_select=K_SELECT).fit(Xc, y)

    def run_f_classif(Xc):
        return f_classif(Xc, y)

    def run_skfeature(Xc):
        return sk_fisher(Xc, y, mode="index")

    methods = {"sparsefs": fit_sparsefs, "f_classif": run_f_classif}
    # skfeature on CSR: MemoryError / OOM at 100x2000 already (peers.md 4.1) -> dense only.
    if sk_fisher is not None and case.density is None:
        methods["skfeature"] = run_skfeature

    timings, memory = {}, {}
    mon = LoadMonitor().start()
    for name, fn in methods.items():
        timings[name] = time_call(fn, setup=fresh, repeat=repeat, warmup=warmup, name=name)
    load = mon.stop()  # the whole case (all methods): a longer, less coarse window
    for name, fn in methods.items():
        memory[name] = call_peak_memory(fn, setup=fresh)

    est = timings["sparsefs"].result
    F = np.asarray(timings["f_classif"].result[0], dtype=float)
    ref_order = order_of(F)
    sfs_scores = np.asarray(est.scores_, dtype=float)
    sfs_order = order_of(sfs_scores)
    cmp_sfs = compare_order(sfs_order, F)
    support = getattr(est, "support_", None)
    support_ok = None
    if support is not None:
        support_ok = bool(set(np.flatnonzero(support)) == set(ref_order[:K_SELECT]))
    ranking = getattr(est, "ranking_", None)
    ranking_ok = None
    if ranking is not None:  # ranking_ must order features like scores_ (best = smallest)
        ranking_ok = bool(
            np.array_equal(np.argsort(ranking, kind="stable"), sfs_order)
            or compare_order(np.argsort(ranking, kind="stable"), F)["valid"]
        )
    # Informational: raw Fisher statistic rescaled to F (equal if fisher = SSB / SSW).
    fisher_raw = getattr(est, "fisher_scores_", None)
    fisher_to_f_relerr = None
    if fisher_raw is not None:
        n = case.n
        scaled = np.asarray(fisher_raw, dtype=float) * (n - N_CLASSES) / (N_CLASSES - 1)
        ok = np.isfinite(F) & (F > 0)
        fisher_to_f_relerr = float(np.max(np.abs(scaled[ok] - F[ok]) / F[ok]))

    agree = agrees(cmp_sfs) and support_ok is not False and ranking_ok is not False
    med = {k: t.median for k, t in timings.items()}
    row = {
        "case": case.label,
        "n": case.n,
        "p": case.p,
        "format": "dense" if case.density is None else "csr",
        "density": case.density,
        "sparsefs_s": med["sparsefs"],
        "f_classif_s": med["f_classif"],
        "skfeature_s": med.get("skfeature"),
        "ratio_f_classif": med["f_classif"] / med["sparsefs"],
        "ratio_skfeature": (med["skfeature"] / med["sparsefs"]) if "skfeature" in med else None,
        "rank_agree": agree,
        "rank_check": cmp_sfs,
        "support_matches_f_classif_topk": support_ok,
        "ranking_matches_scores": ranking_ok,
        "fisher_to_f_relerr": fisher_to_f_relerr,
        "hits_sparsefs": hits(sfs_order, informative),
        "hits_f_classif": hits(ref_order, informative),
        "mem_traced_mib": {k: m["traced_mib"] for k, m in memory.items()},
        "mem_rss_mib": {k: m["rss_mib"] for k, m in memory.items()},
        "timings": {k: t.to_dict() for k, t in timings.items()},
        "fl": load["fl"],
        "fl_coarse": load["fl_coarse"],
    }
    row["within_2x_of_f_classif"] = row["ratio_f_classif"] >= 1.0 / MAX_SLOWDOWN
    if "skfeature" in timings:
        sk_order = np.asarray(timings["skfeature"].result)
        row["skfeature_rank_check"] = compare_order(sk_order, F)
        row["hits_skfeature"] = hits(sk_order, informative)
    return row


def main(argv=None) -> int:
    parser = bench_parser(__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    repeat = repeat_for(args)
    try:
        from sparsefs.selection import FisherScore
    except ImportError as exc:
        print(
            f"error: cannot import sparsefs.selection.FisherScore: {exc}\n"
            "install the package first: pip install -e . --no-deps",
            file=sys.stderr,
        )
        return 2
    sk_fisher, sk_info = load_skfeature()

    run = BenchRun("fisher", args)
    cases = QUICK_CASES if args.quick else FULL_CASES
    rows = []
    for case in cases:
        print(f"  running {case.label} ...", file=sys.stderr, flush=True)
        rows.append(run_case(case, FisherScore, sk_fisher, repeat, args.warmup))

    for r in rows:
        swaps = r["rank_check"]["n_positions_differ"]
        r["ranks_vs_f_classif"] = (
            "!!! DIFFER !!!"
            if not r["rank_agree"]
            else "same"
            if swaps == 0
            else f"same ({swaps} near-tie swaps)"
        )
        sk = r.get("skfeature_rank_check")
        r["sk_ranks"] = None if sk is None else ("same" if agrees(sk) else "differ")
        r["hits"] = "/".join(
            str(r[k]) for k in ("hits_sparsefs", "hits_f_classif", "hits_skfeature") if k in r
        )
        r["load_flag"] = fl_flag(r["fl"], r["fl_coarse"])
        r["fl_shown"] = (
            None
            if r["fl"] is None
            else (
                f"{r['fl']:.3f}"
                + ("~" if r["fl_coarse"] else "")
                + (" HIGH" if r["load_flag"] else "")
            )
        )
    sk_label = "skfeature" if sk_fisher is not None else "skfeature (absent)"
    print(
        f"\nFisher score: sparsefs FisherScore(n_features_to_select={K_SELECT}).fit vs "
        f"f_classif vs skfeature fisher_score(mode='index'); {N_CLASSES} classes, "
        f"{N_INFORMATIVE} planted features.\nmedian of {repeat} after {args.warmup} warm-up "
        f"(fresh copy of X per call, outside the timing); ratio = peer time / sparsefs time "
        f"(> 1: sparsefs faster). skfeature: {sk_info}\n"
    )
    print_table(
        rows,
        [
            ("case", "case"),
            ("sparsefs_s", "sparsefs s"),
            ("f_classif_s", "f_classif s"),
            ("skfeature_s", f"{sk_label} s"),
            ("ratio_f_classif", "f_classif/sparsefs"),
            ("ratio_skfeature", "skfeature/sparsefs"),
            ("ranks_vs_f_classif", "sparsefs ranks = f_classif"),
            ("sk_ranks", "skfeature ranks"),
            ("hits", f"hits@{K_SELECT} sfs/fcl/skf"),
            ("fl_shown", "fl (~ coarse)"),
        ],
    )
    mem_rows = [
        {
            "case": r["case"],
            **{f"{k}_t": v for k, v in r["mem_traced_mib"].items()},
            **{f"{k}_r": v for k, v in r["mem_rss_mib"].items()},
        }
        for r in rows
    ]
    print()
    print_table(
        mem_rows,
        [("case", "case")]
        + [
            (f"{m}_{s}", f"{m} MiB {s}")
            for s in "tr"
            for m in ("sparsefs", "f_classif", "skfeature")
        ],
        title="extra peak memory of one call: t = tracemalloc peak above the input "
        "(primary), r = peak RSS - RSS before (may under-report; see _bench.py)",
    )

    disagree = [r["case"] for r in rows if not r["rank_agree"]]
    slow = [r["case"] for r in rows if not r["within_2x_of_f_classif"]]
    print()
    if disagree:
        print(
            "!!! RANKING DISAGREEMENT: sparsefs FisherScore does not rank features like "
            f"f_classif in: {', '.join(disagree)} !!!"
        )
    else:
        print("rankings: sparsefs FisherScore ranks features exactly like f_classif in every case.")
    print(
        f"informal expectation (sparsefs <= {MAX_SLOWDOWN:g}x f_classif time): "
        + ("met in every case." if not slow else f"NOT met in: {', '.join(slow)}")
    )

    for r in rows:  # keep the JSON to figures, not table decorations
        for k in ("ranks_vs_f_classif", "sk_ranks", "hits", "fl_shown"):
            r.pop(k)
    payload = {
        "peers": {
            "f_classif": "sklearn.feature_selection.f_classif",
            "skfeature": sk_info if sk_fisher is None else f"skfeature-chappers {sk_info}",
        },
        "k_select": K_SELECT,
        "n_classes": N_CLASSES,
        "n_informative": N_INFORMATIVE,
        "seed": SEED,
        "rank_agree_all": not disagree,
        "rank_disagree_cases": disagree,
        "within_2x_all": not slow,
        "results": rows,
    }
    payload = run.finish(payload)
    flag = payload["load"]["load_flag"]
    print(
        f"machine load over the run: fl={payload['load']['fl']}, loadavg "
        f"{payload['load']['loadavg_before']} -> {payload['load']['loadavg_after']}"
        + (f"  !!! {flag}" if flag else "")
    )
    emit_json(payload, out=args.out)
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
