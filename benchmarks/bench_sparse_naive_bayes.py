"""Sparse naive Bayes: fit time on a real bag-of-words corpus against the dense NB fits.

In the same run and on the same CSR matrix (``rt-polarity``: 10662 sentence snippets, the
sparse center paper's own text data, from ``$SPARSEFS_DATA``):

* ``SparseNaiveBayes(k, model="bernoulli")`` against scikit-learn's ``BernoulliNB`` (the floor:
  the same per-class counts, no selection);
* ``SparseNaiveBayes(k, model="multinomial")`` against ``MultinomialNB``;
* ``SparseCenterClassifier(k, norm="l2")``, the exact k-sparse nearest-center peer.

Each figure is the median of ``--repeat`` timed fits after ``--warmup`` untimed ones (numba
compilation outside the timing). Correctness in passing: at ``k = p`` both models must equal
scikit-learn's (log-probabilities to 1e-9); the multinomial duality gap at ``k`` is printed.

Run: ``python benchmarks/bench_sparse_naive_bayes.py [--quick] [--repeat N] [--out FILE]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.naive_bayes import BernoulliNB, MultinomialNB

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import BenchRun, bench_parser, emit_json, print_table, repeat_for, time_call


def main() -> int:
    args = bench_parser("sparse naive Bayes vs BernoulliNB / MultinomialNB").parse_args()
    repeat = repeat_for(args)
    from sparsefs.classification import SparseCenterClassifier, SparseNaiveBayes
    from sparsefs.datasets import load_text_corpus

    name = "imdb" if args.quick else "rt-polarity"
    try:
        counts = load_text_corpus(name)
    except FileNotFoundError as exc:
        print(f"error: the {name} corpus is not available ({exc}); set SPARSEFS_DATA.")
        return 2
    X, y = counts.X.tocsr(), counts.y
    n, p = X.shape
    k = 100
    run = BenchRun("sparse_naive_bayes", args)
    # warm-up (numba compilation / cache load) outside every timing
    few = np.concatenate([np.flatnonzero(y == c)[:25] for c in np.unique(y)])
    SparseNaiveBayes(5).fit(X[few], y[few])
    SparseNaiveBayes(5, model="multinomial").fit(X[few], y[few])
    SparseCenterClassifier(5).fit(X[few], y[few])

    cases = [
        ("SparseNaiveBayes bernoulli", lambda: SparseNaiveBayes(k).fit(X, y)),
        ("BernoulliNB", lambda: BernoulliNB().fit(X, y)),
        (
            "SparseNaiveBayes multinomial",
            lambda: SparseNaiveBayes(k, model="multinomial").fit(X, y),
        ),
        ("MultinomialNB", lambda: MultinomialNB().fit(X, y)),
        ("SparseCenterClassifier l2", lambda: SparseCenterClassifier(k).fit(X, y)),
    ]
    timings = {}
    for label, fn in cases:
        print(f"  timing {label} ...", file=sys.stderr, flush=True)
        timings[label] = time_call(fn, repeat=repeat, warmup=args.warmup, name=label)
    multi = timings["SparseNaiveBayes multinomial"].result

    # correctness at k = p
    full_b = SparseNaiveBayes(p).fit(X, y)
    full_m = SparseNaiveBayes(p, model="multinomial").fit(X, y)
    err_b = float(
        np.abs(full_b.predict_log_proba(X) - BernoulliNB().fit(X, y).predict_log_proba(X)).max()
    )
    err_m = float(
        np.abs(full_m.predict_log_proba(X) - MultinomialNB().fit(X, y).predict_log_proba(X)).max()
    )

    def ratio(a, b):
        return timings[b].median / timings[a].median

    rows = [
        {"method": lab, "median_s": t.median, "fl": t.fl} for lab, t in timings.items()
    ]
    print(
        f"\n{name}: {n} documents x {p} terms, nnz={X.nnz}; k={k}; median of {repeat} fits."
    )
    print_table(rows, [("method", "method"), ("median_s", "median s"), ("fl", "fl")])
    summary = {
        "bernoulli_vs_BernoulliNB": ratio("SparseNaiveBayes bernoulli", "BernoulliNB"),
        "multinomial_vs_MultinomialNB": ratio("SparseNaiveBayes multinomial", "MultinomialNB"),
        "bernoulli_vs_sparse_centers_l2": ratio(
            "SparseNaiveBayes bernoulli", "SparseCenterClassifier l2"
        ),
    }
    print(
        "ratios (peer time / sparsefs time, > 1: sparsefs faster): "
        + ", ".join(f"{k_}={v:.2f}" for k_, v in summary.items())
    )
    print(
        f"multinomial at k={k}: log-likelihood gain {multi.log_likelihood_gain_:.4g}, "
        f"duality gap {multi.duality_gap_:.3g} ({multi.n_iter_} Frank-Wolfe iterations)"
    )
    print(
        f"k = p equals scikit-learn: Bernoulli {err_b:.2g}, multinomial {err_m:.2g} "
        "(max |dlogp|)"
    )
    ok = err_b < 1e-9 and err_m < 1e-9
    payload = run.finish(
        {
            "corpus": name,
            "shape": [n, p],
            "nnz": int(X.nnz),
            "k": k,
            "results": [t.to_dict() for t in timings.values()],
            "ratios": summary,
            "multinomial_duality_gap": multi.duality_gap_,
            "k_equals_p_max_abs_logp_error": {"bernoulli": err_b, "multinomial": err_m},
        }
    )
    if not ok:
        print("!!! k = p does not equal scikit-learn !!!")
    emit_json(payload, out=args.out)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
