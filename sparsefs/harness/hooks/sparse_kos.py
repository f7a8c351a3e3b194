"""Claim checks of ``sparsefs reproduce sparse_kos`` (``configs/sparse_kos.toml``).

Each function reads the stored results of a reproduction and returns a
:class:`~sparsefs.harness.ClaimVerdict` for one claim of Lapanowski & Gaynanova (2019,
Section 6; spec ``sparse-kos.md`` 2.11). The paper's Figure 4 / Table 2 values are not public:
its claims are qualitative (who is best, which features get a weight), and so are the rules
here, each stated in the verdict's reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sparsefs.harness._claims import ClaimVerdict, fraction_verdict
from sparsefs.harness.hooks._common import fmt_ranking, mean_by_method, support_frequency

__all__ = ["best_methods", "extra_sections", "feature_frequencies", "feature_sections",
           "large_weights", "near_peer", "sim2_diagnosis", "sim2_section", "unit_weights"]

_METHOD = "sparse KOS"
# the reproduction's sparse KOS (configs/sparse_kos.toml): the paper's tuning and Algorithm 1
_PAPER = {"sigma2_selection": "joint", "acceleration": "none"}


def _errors(reproduction: Any, experiment: str, dataset: str):
    return mean_by_method(reproduction, experiment, dataset, "error", "self")


def feature_frequencies(reproduction: Any, *, experiment: str, dataset: str,
                        selected: Sequence[int], dropped: Sequence[int] = (),
                        at_least: float = 0.95, at_most: float = 0.05,
                        others_at_most: float | None = None,
                        others_max: float | None = None) -> ClaimVerdict:
    """Features (1-based, as the paper counts) that sparse KOS should keep in nearly every split
    (share >= ``at_least``) and drop (share <= ``at_most``); optionally every other feature
    kept in at most ``others_at_most`` of the splits on average, and none in more than
    ``others_max``."""
    freq, _, sup = support_frequency(reproduction, experiment, dataset, _METHOD)
    n_splits = sup["fold"].nunique()
    sel = [int(j) - 1 for j in selected]
    drop = [int(j) - 1 for j in dropped]
    ok = [freq[j] >= at_least for j in sel] + [freq[j] <= at_most for j in drop]
    parts = [", ".join(f"x{j + 1} {freq[j]:.0%}" for j in sel) + " kept"]
    if drop:
        parts.append(", ".join(f"x{j + 1} {freq[j]:.0%}" for j in drop) + " kept")
    rule = (f"kept in ≥ {at_least:.0%} of the splits" + (f", dropped ones in ≤ {at_most:.0%}"
                                                           if drop else ""))
    if others_at_most is not None:
        rest = np.delete(freq, sel + drop)
        ok.append(rest.mean() <= others_at_most)
        parts.append(f"other features kept in {rest.mean():.0%} of splits on average "
                     f"(max {rest.max():.0%})")
        rule += f", the others in ≤ {others_at_most:.0%} on average"
        if others_max is not None:
            ok.append(rest.max() <= others_max)
            rule += f" and each in ≤ {others_max:.0%}"
    verdict = fraction_verdict(sum(ok), len(ok), partly_at=0.5)
    return ClaimVerdict(verdict, "; ".join(parts) + f" (over {n_splits} splits)",
                        f"rule: the named features {rule}; {sum(ok)} of {len(ok)} parts hold.")


def unit_weights(reproduction: Any, *, experiment: str, dataset: str,
                 features: Sequence[int], share: float = 0.9, tol: float = 1e-3
                 ) -> ClaimVerdict:
    """Share of splits in which every feature of ``features`` has |w| = 1 (within ``tol``)."""
    _, _, sup = support_frequency(reproduction, experiment, dataset, _METHOD)
    cols = [int(j) - 1 for j in features]
    rows = sup[sup["feature"].isin(cols)]
    per_split = rows.groupby("fold")["score"].min()
    got = float((per_split >= 1 - tol).mean())
    names = " = ".join(f"w{j}" for j in features)
    verdict = ("reproduced" if got >= share else "partly" if got >= share / 2
               else "not reproduced")
    return ClaimVerdict(verdict, f"{names} = 1 in {got:.0%} of {per_split.shape[0]} splits "
                        f"(smallest min |w| {per_split.min():.2f})",
                        f"rule: ≥ {share:.0%} of the splits (|w| ≥ {1 - tol:g}).")


def best_methods(reproduction: Any, *, experiment: str, dataset: str, best: Sequence[str],
                 method: str = _METHOD, second: str | None = None,
                 own: Sequence[str] | None = None) -> ClaimVerdict:
    """The paper's ``best`` methods should be the top ``len(best)`` by mean test error (and
    ``second`` the runner-up behind ``method`` when given).

    ``reproduced`` when all of it holds. ``partly`` only when the paper's own methods
    (``own``, default ``[method]``: what the claim is about) hold their places and only a
    peer's place fails; when one of the paper's own methods is outside the top, the claim is
    ``not reproduced`` however many peers happen to be there.
    """
    err = _errors(reproduction, experiment, dataset)
    order = list(err.sort_values().index)
    top = order[:len(best)]
    own = [m for m in (own if own is not None else [method]) if m in best]
    ok = [m in top for m in best]
    own_ok = all(m in top for m in own)
    if second is not None:
        ok.append(len(order) > 1 and order[0] == method and order[1] == second)
        own_ok = own_ok and len(order) > 0 and order[0] == method
    n_ok = sum(ok)
    verdict = ("reproduced" if all(ok) else "partly" if own_ok else "not reproduced")
    lead = err.min()
    gaps = ", ".join(f"{m} +{err[m] - lead:.3f}" for m in best if m in err.index)
    places = ", ".join(f"{m} {order.index(m) + 1} of {len(order)}" for m in own
                       if m in order)
    return ClaimVerdict(
        verdict, "mean test error, best first: " + fmt_ranking(err, ascending=True, top=4),
        f"rule: {', '.join(best)} the top {len(best)}"
        + (f", {second} second behind {method}" if second else "")
        + f"; {n_ok} of {len(ok)} hold; the paper's own method(s) ranked {places} (partly "
        f"only when they hold their places) (gap to the best: {gaps}).")


def near_peer(reproduction: Any, *, experiment: str, dataset: str, peer: str = "KOS",
              method: str = _METHOD, tolerance: float = 0.01) -> ClaimVerdict:
    """``method`` and ``peer`` about equal: mean test errors within ``tolerance``."""
    err = _errors(reproduction, experiment, dataset)
    diff = float(err[method] - err[peer])
    verdict = "reproduced" if abs(diff) <= tolerance else (
        "partly" if abs(diff) <= 3 * tolerance else "not reproduced")
    extra = ""
    variant = f"{method} (LDA rule)"
    if variant in err.index:
        extra = f"; {variant} {err[variant]:.3f}"
    return ClaimVerdict(verdict, f"{method} {err[method]:.3f}, {peer} {err[peer]:.3f}{extra}",
                        f"rule: |difference| ≤ {tolerance:g} (ours {diff:+.3f}).")


def large_weights(reproduction: Any, *, experiment: str, dataset: str,
                  large: Sequence[int], half: int, threshold: float = 0.9) -> ClaimVerdict:
    """Blood: |w| > ``threshold`` in (nearly) every split for the ``large`` features, and in
    about half of the splits (25-75%) for feature ``half``."""
    _, _, sup = support_frequency(reproduction, experiment, dataset, _METHOD)
    big = sup.assign(big=sup["score"] > threshold).groupby("feature")["big"].mean()
    ok = [big.get(j - 1, 0.0) >= 0.9 for j in large]
    share_half = float(big.get(half - 1, 0.0))
    ok.append(0.25 <= share_half <= 0.75)
    names = {1: "Recency", 2: "Frequency", 3: "Monetary", 4: "Time"}
    ours = ", ".join(f"{names.get(j, f'x{j}')} {big.get(j - 1, 0.0):.0%}" for j in
                     [*large, half])
    return ClaimVerdict(fraction_verdict(sum(ok), len(ok), partly_at=0.5),
                        f"|w| > {threshold:g} in: {ours} of the splits",
                        f"rule: ≥ 90% of the splits for the large ones, 25-75% for "
                        f"{names.get(half, half)}; {sum(ok)} of {len(ok)} hold.")


# --------------------------------------------------------------------------------------------
# Simulation 2: why feature 2 is not selected (a diagnosis recomputed at every render)
# --------------------------------------------------------------------------------------------


def _sim2_split(seed: int):
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from sparsefs.datasets import make_kos_sine

    d = make_kos_sine(random_state=seed)
    Xtr, Xte, ytr, yte = train_test_split(d.X, d.y, train_size=2 / 3, stratify=d.y,
                                          random_state=seed)
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), scaler.transform(Xte), ytr, yte


def sim2_diagnosis(seeds: Sequence[int] = (0, 1, 2)) -> list[dict[str, Any]]:
    """Per seeded Simulation 2 split: the tuned sparse KOS fit, the profile objective of the
    paper's problem in ``w2`` at its sigma2 and gamma (lambda = 0, the other weights at
    (1, ., 1, 1, 0, ...)), the exact gradient at ``w = (1, 1, 1, 1, 0, ...)`` with a
    finite-difference check, the weights at the first point of the lambda path (lambda =
    1e-10 lambda_max), w2 when sparse KOS is tuned with a log lambda grid, the 0.5-0.9 sigma2
    quantiles or the packages' sigma2 rule, and the test error of KOS with fixed unit weights
    on features {1,2,3,4} against {1,3,4}.

    Returns
    -------
    list of dict
    """
    from sparsefs._kernels import sparse_kos as kern
    from sparsefs.classification import SparseKOSClassifier

    out = []
    for seed in seeds:
        Xtr, Xte, ytr, yte = _sim2_split(seed)
        # the paper's tuning and Algorithm 1, as in the reproduction's config (not the defaults)
        model = SparseKOSClassifier(**_PAPER, random_state=0).fit(Xtr, ytr)
        s2, ridge = model.sigma2_, model.ridge_
        Z = kern.optimal_scores(np.searchsorted(np.unique(ytr), ytr), 2)
        p = Xtr.shape[1]
        base = np.zeros(p)
        base[[0, 2, 3]] = 1.0
        profile = {}
        for w2 in (0.0, 0.5, 0.9, 1.0):
            w = base.copy()
            w[1] = w2
            profile[w2] = kern.kos_state(Xtr, Z, s2, ridge, w).smooth
        w = base.copy()
        w[1] = 1.0
        st = kern.kos_state(Xtr, Z, s2, ridge, w)
        grad = kern.weight_gradient(st.K, Xtr, st.dual_coef, Z - st.fitted, w, s2, ridge)
        variants = {}
        for name, kw in (("log λ grid", {"alpha_grid": "log"}),
                         ("σ² quantiles 0.5-0.9", {"sigma2_quantiles": (0.5, 0.7, 0.9)}),
                         ("packages' σ² rule", {"sigma2_rule": "package"})):
            fit = SparseKOSClassifier(**_PAPER, random_state=0, **kw)
            fit.fit(Xtr, ytr)
            variants[name] = float(np.abs(fit.weights_[1]))
        errors = {}
        for name, cols in (("1-4", [0, 1, 2, 3]), ("1,3,4", [0, 2, 3])):
            kos = SparseKOSClassifier(alpha=0.0, sigma2=s2, ridge=ridge, standardize=False)
            kos.fit(Xtr[:, cols], ytr)
            errors[name] = float(np.mean(kos.predict(Xte[:, cols]) != yte))
        out.append({
            "seed": seed, "sigma2": s2, "ridge": ridge, "alpha_ratio": model.alpha_ /
            model.alpha_max_, "weights": np.abs(model.weights_),
            "first_path_w2": float(model.path_weights_[0, 1]), "profile": profile,
            "grad": grad[:4], "fd_slope": (profile[1.0] - profile[0.9]) / 0.1,
            "test_error": float(np.mean(model.predict(Xte) != yte)), "kos_error": errors,
            "variants": variants,
        })
    return out


def sim2_section(quick: bool = False) -> str:
    """Markdown: the Simulation 2 diagnosis (:func:`sim2_diagnosis` on 1 or 3 seeded splits)."""
    rows = sim2_diagnosis((0,) if quick else (0, 1, 2))
    lines = [
        "### Simulation 2: why feature 2 is not selected (diagnosis, ours)", "",
        "x2 enters the class rule only through x2² (class 1 iff x3 + sin(x4 + x1) < x2²), and "
        "it is informative: KOS with fixed unit weights has a lower test error on features "
        "{1, 2, 3, 4} than on {1, 3, 4} (last columns). Yet sparse KOS sets w2 = 0. Below, for "
        "seeded splits of `make_kos_sine(random_state=seed)` (2/3 train, z-scored on the "
        "training rows), at the sigma2 and gamma sparse KOS tunes: the profile objective "
        "f(w2) = min_A F(A, w) of the paper's problem (12) at lambda = 0 with the other "
        "weights at (1, ·, 1, 1, 0, …), the exact gradient of F in w at w = (1, 1, 1, 1, 0, …) "
        "(`weight_gradient`; its w2 entry checked against the finite difference of f between "
        "w2 = 0.9 and 1), and w2 at the first point of the λ path (λ = 1e-10 λ_max).", "",
        "| seed | sigma2 | gamma | f(0) | f(0.5) | f(1) | ∂F/∂w2 (finite diff.) | "
        "∂F/∂w1, ∂F/∂w3, ∂F/∂w4 | w2 at λ ≈ 0 | fitted w1..w4 | test error | KOS error "
        "{1,2,3,4} / {1,3,4} |",
        "|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---|",
    ]
    for r in rows:
        f = r["profile"]
        g = r["grad"]
        lines.append(
            f"| {r['seed']} | {r['sigma2']:.2f} | {r['ridge']:.3f} | {f[0.0]:.4f} | "
            f"{f[0.5]:.4f} | {f[1.0]:.4f} | {g[1]:+.4f} ({r['fd_slope']:+.4f}) | "
            f"{g[0]:+.4f}, {g[2]:+.4f}, {g[3]:+.4f} | {r['first_path_w2']:.3f} | "
            + ", ".join(f"{v:.2f}" for v in r["weights"][:4])
            + f" | {r['test_error']:.3f} | {r['kos_error']['1-4']:.3f} / "
            f"{r['kos_error']['1,3,4']:.3f} |")
    rises = sum(r["profile"][1.0] > r["profile"][0.0] for r in rows)
    names = list(rows[0]["variants"])
    lines += ["", "w2 fitted by sparse KOS tuned otherwise: "
              + "; ".join(f"{n}: " + ", ".join(f"{r['variants'][n]:.2f}" for r in rows)
                          for n in names) + " (one value per seed).", ""]
    if rises < len(rows):
        lines.append(
            f"In {len(rows) - rises} of {len(rows)} splits the objective is LOWER with x2 "
            "(f(1) < f(0)) yet the fit sets w2 = 0 there: the optimiser misses a better "
            "point of the paper's problem (an implementation or algorithm issue, to be "
            "fixed).")
        return "\n".join(lines)
    lines.append(
        f"In {rises} of {len(rows)} splits the objective is lower without x2 (f(0) < f(1)) "
        "even with no l1 penalty, and its gradient pushes w2 down while it pulls w1, w3 and "
        "w4 up. The optimiser therefore does what the paper's problem asks: the minimiser of "
        "(12) at the tuned sigma2 and gamma leaves x2 out, and w2 is already 0 at λ ≈ 0, so "
        "neither the λ grid nor the λ chosen by CV is the cause. A weight that reaches 0 "
        "stays there (the kernel depends on w², so the gradient in w_l is proportional to "
        "w_l). The other σ² rules and the log λ grid (line above; spec sparse-kos.md 2.9) do "
        "not bring x2 back either. **Verdict: the method, not the implementation**: the "
        "fit-plus-ridge criterion gains less from the even effect x2² than it pays for the "
        "extra kernel direction, although that direction lowers the test error. This is "
        "consistent with the paper's own remark that sparse KOS 'does not consistently find "
        "the true features' in Simulation 2.")
    return "\n".join(lines)


# -- feature frequencies and errors ------------------------------------------------------

def _mean_errors(table) -> Any:
    rows = table[(table["metric"] == "error") & (table["estimator"] == "self")]
    return rows.groupby(["dataset", "method"])["value"].agg(["mean", "std", "count"])


def feature_sections(reproduction: Any, outdir: Any) -> str:
    """Feature frequencies, mean |w| and the mean test errors (markdown); the claims are
    judged by the Claims table (``sparsefs.harness.hooks.sparse_kos``)."""
    import pandas as pd

    tables = [r.table for r in reproduction.results]
    supports = [r.supports for r in reproduction.results if r.supports is not None]
    if not tables:
        return ""
    table = pd.concat(tables, ignore_index=True)
    lines = ["## Sparse KOS: how often each feature is selected (ours)", "",
             "The paper's claims on these features are judged in the Claims table above.", ""]
    if not supports:
        return "\n".join([*lines, "(no per-split selections recorded)"])
    sup = pd.concat(supports, ignore_index=True)
    sup = sup[sup["method"] == "sparse KOS"]
    errors = _mean_errors(table)
    for dataset, rows in sup.groupby("dataset", sort=False):
        freq = rows.groupby("feature")["selected"].mean().sort_index().to_numpy()
        weight = rows.groupby("feature")["score"].mean().sort_index().to_numpy()
        n_splits = rows["fold"].nunique()
        lines += [f"### {dataset}", "",
                  f"How often each feature has w != 0 over {n_splits} splits, and its mean |w|:",
                  "", "| feature | " + " | ".join(str(j + 1) for j in range(freq.size)) + " |",
                  "|---|" + "---:|" * freq.size,
                  "| w != 0 | " + " | ".join(f"{v:.0%}" for v in freq) + " |",
                  "| mean abs(w) | " + " | ".join(f"{v:.2f}" for v in weight) + " |", ""]
        if dataset in errors.index.get_level_values(0):
            err = errors.loc[dataset].sort_values("mean")
            ranking = ", ".join(f"{m} {r['mean']:.3f}" for m, r in err.iterrows())
            lines += [f"Mean test error, best first: {ranking}.", ""]
    return "\n".join(lines)


def extra_sections(reproduction: Any, outdir: Any) -> str:
    """The report hook: the feature frequencies and errors (:func:`feature_sections`), then
    the Simulation 2 diagnosis (:func:`sim2_section`)."""
    return feature_sections(reproduction, outdir).rstrip() + "\n\n" \
        + sim2_section(reproduction.quick) + "\n"
