"""Benchmark: the FDR of the knockoff filter on banded / AR(1) correlation (issue #33).

Monte Carlo over seeds: rows ``X ~ N(0, Sigma)`` (n = p = 600), ``k = 30`` features with a
coefficient of +-``amplitude`` in ``y = X beta + noise`` (``--target regression``) or
``y = 1{X beta + noise > 0}`` (``classification``), so that the nulls are exactly the
features outside the support (y depends on X only through them). Designs:

* ``toeplitz``: ``Sigma_jk = 0.8^|j-k|`` (AR(1), the issue's row);
* ``banded``: ``Sigma_jk = 1, 0.6, 0.3, 0.1`` for ``|j-k| = 0..3``, 0 beyond (an MA(3)
  correlation, smallest eigenvalue 0.2);
* ``independent``: ``Sigma = I`` (the control: no correlation to miss).

Each seed fits ``KnockoffSelector`` (the lasso statistic, q = 0.1) with

* ``default``: ``covariance="auto"`` (the model check chooses the spiked or the Ledoit-Wolf
  model; the chosen one, its held-out residual and any warning are recorded);
* ``former``: the former default, the low-rank spiked model without the model check's
  scaling of s (``CHECK_TOLERATED`` patched to infinity for that fit);
* ``true``: exact Gaussian knockoffs of the true ``Sigma`` (``covariance=Sigma``), on the
  same data: the independent check (its FDR is controlled by the model-X theorem).

Printed per design and construction: mean FDP +- SE, ``q + 2 SE`` beside it, mean power,
how often the model check warned. Target (issue #33): mean FDP <= q + 2 SE for the default
on every design. Exit status 1 when a target is missed (after the JSON line).

Run: ``python benchmarks/bench_knockoffs_fdr.py [--seeds 130] [--designs toeplitz,banded]
[--jobs 2] [--quick]`` (``--quick``: 10 seeds).
"""

from __future__ import annotations

import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from scipy.linalg import toeplitz

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import BenchRun, bench_parser, emit_json, loadavg, print_table

from sparsefs.exceptions import KnockoffModelWarning, NoFeatureSelectedWarning
from sparsefs.selection import KnockoffSelector, _knockoffs

Q = 0.1
N = P = 600
K = 30
CONSTRUCTIONS = ("default", "former", "true")
TOLERATED = _knockoffs.CHECK_TOLERATED


def correlation(design: str, p: int) -> np.ndarray:
    """The design's correlation matrix."""
    if design == "toeplitz":
        return toeplitz(0.8 ** np.arange(p))
    if design == "banded":
        return toeplitz(np.r_[1.0, 0.6, 0.3, 0.1, np.zeros(p - 4)])
    if design == "independent":
        return np.eye(p)
    raise ValueError(design)


def simulate(design: str, seed: int, target: str, amplitude: float):
    """X, y and the true support of one seed."""
    rng = np.random.default_rng(seed)
    sigma = correlation(design, P)
    X = rng.standard_normal((N, P)) @ np.linalg.cholesky(sigma).T
    support = np.zeros(P, dtype=bool)
    support[rng.choice(P, K, replace=False)] = True
    beta = np.zeros(P)
    beta[support] = amplitude * rng.choice([-1.0, 1.0], K)
    y = X @ beta + rng.standard_normal(N)
    if target == "classification":
        y = (y > 0).astype(int)
    return X, y, support, sigma


def one_seed(task):
    """FDP, power, time, chosen model and warning of every construction on one seed."""
    design, seed, target, amplitude = task
    X, y, support, sigma = simulate(design, seed, target, amplitude)
    out = {}
    for name in CONSTRUCTIONS:
        cov = {"default": "auto", "former": "spiked", "true": sigma}[name]
        _knockoffs.CHECK_TOLERATED = np.inf if name == "former" else TOLERATED
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.simplefilter("ignore", NoFeatureSelectedWarning)
            sel = KnockoffSelector(fdr=Q, covariance=cov, random_state=seed,
                                   target_type=target).fit(X, y)
        _knockoffs.CHECK_TOLERATED = TOLERATED
        sel_ = sel.support_
        out[name] = {
            "fdp": float((sel_ & ~support).sum() / max(1, sel_.sum())),
            "power": float((sel_ & support).sum() / K),
            "seconds": time.perf_counter() - t0,
            "model": sel.covariance_,
            "warned": any(issubclass(w.category, KnockoffModelWarning) for w in caught),
        }
    return design, seed, out


def main() -> int:
    parser = bench_parser("knockoff FDR on banded / AR(1) correlation", default_repeat=1)
    parser.add_argument("--seeds", type=int, default=None, help="seeds per design (130)")
    parser.add_argument("--designs", default="toeplitz,banded,independent")
    parser.add_argument("--target", choices=("regression", "classification"),
                        default="regression")
    parser.add_argument("--amplitude", type=float, default=0.25)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    run = BenchRun("knockoffs_fdr", args)
    n_seeds = args.seeds or (10 if args.quick else 130)
    designs = args.designs.split(",")
    tasks = [(d, s, args.target, args.amplitude) for d in designs for s in range(n_seeds)]
    print(f"{len(tasks)} fits x {len(CONSTRUCTIONS)} constructions, uptime load "
          f"{loadavg()}", file=sys.stderr)
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(one_seed, tasks))
    else:
        results = [one_seed(t) for t in tasks]
    rows, ok = [], True
    for d in designs:
        per = [r for dd, _, r in results if dd == d]
        for name in CONSTRUCTIONS:
            fdp = np.array([r[name]["fdp"] for r in per])
            se = float(fdp.std(ddof=1) / np.sqrt(fdp.size)) if fdp.size > 1 else float("nan")
            limit = Q + 2 * se
            met = bool(fdp.mean() <= limit)
            models = [r[name]["model"] for r in per]
            row = {
                "design": d, "construction": name, "seeds": int(fdp.size),
                "mean_fdp": float(fdp.mean()), "se": se, "q_plus_2se": limit,
                "fdr_met": met,
                "power": float(np.mean([r[name]["power"] for r in per])),
                "seconds": float(np.median([r[name]["seconds"] for r in per])),
                "warned": int(sum(r[name]["warned"] for r in per)),
                "models": {m: models.count(m) for m in sorted(set(models))},
            }
            rows.append(row)
            if name == "default" and not met:
                ok = False
    print_table(rows, ["design", "construction", "seeds", "mean_fdp", "se", "q_plus_2se",
                       "fdr_met", "power", "seconds", "warned", "models"])
    emit_json(run.finish({"target": args.target, "amplitude": args.amplitude, "q": Q,
                          "n": N, "p": P, "k": K, "results": rows, "targets_met": ok}),
              out=args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
