"""Sub-commands: ``methods``, ``select`` and ``demo``."""

import argparse
import ast
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from sparsefs import __version__
from sparsefs.cli import _harness
from sparsefs.utils import get_method, list_methods, scores_frame

DEFAULT_DATA = "default"


class CLIError(Exception):
    """A runtime error reported as one line and exit code 1."""


def _parse_k(text: str) -> int | float | None:
    if text.lower() in ("none", "auto"):
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"-k {text!r}: give a count (20), a fraction (0.1) or 'auto'"
        ) from None


def _parse_param(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--param {text!r}: expected KEY=VALUE")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sparsefs",
        description="Sparse feature selection for high-dimensional data.",
    )
    parser.add_argument("--version", action="version", version=f"sparsefs {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("methods", help="list the registered methods")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p = sub.add_parser(
        "select",
        help="fit one method on a data file and write every feature's score and rank",
        description="Fit one method and write a table of features (feature, index, score, rank, "
        "selected), CSV, TSV or JSON by the output's extension.",
    )
    p.add_argument("data", help=f"a .mat/.csv/.tsv/.parquet/.npz/.h5ad file, or '{DEFAULT_DATA}'")
    p.add_argument("--method", "-m", required=True, help="stem or class name (see 'methods')")
    p.add_argument("-k", type=_parse_k, default=None, metavar="K",
                   help="features to select: count, fraction, or 'auto' (the method's own rule)")
    p.add_argument("--target", "-t", help="label column (CSV/TSV/Parquet) or obs key (h5ad)")
    p.add_argument("--transpose", action="store_true", help="the file is features x samples")
    p.add_argument("--param", "-p", type=_parse_param, action="append", default=[],
                   metavar="KEY=VALUE", help="an estimator parameter (repeatable)")
    p.add_argument("--out", "-o", required=True, help="output file (.csv, .tsv or .json)")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")

    p = sub.add_parser(
        "demo",
        help="run every registered method on the embedded default data (no download)",
        description="The main job: every registered method on scikit-learn's wine data widened "
        "with row-permuted noise features, so the true features are known.",
    )
    p.add_argument("-k", type=int, default=None, metavar="K",
                   help="features each method keeps (default: the number of true features)")
    p.add_argument("--methods", help="comma-separated stems (default: all)")
    p.add_argument("--n-noise", type=int, default=487, help="noise features added (default 487)")
    p.add_argument("--seed", type=int, default=0, help="random seed for data and methods")
    p.add_argument("--raw", action="store_true",
                   help="fit on the raw features (default: z-scored columns, as the papers do)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    _harness.add_parsers(sub)
    return parser


def _load(data: str, target: str | None, transpose: bool):
    from sparsefs.datasets import load, load_default

    if data == DEFAULT_DATA:
        return load_default()
    return load(data, target=target, transpose=transpose)


def _make_estimator(info, params: dict, *, k=None, seed=None, n_clusters=None):
    cls = info.estimator
    accepted = cls().get_params()
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise CLIError(
            f"{info.name} has no parameter {', '.join(unknown)}; it takes {', '.join(accepted)}."
        )
    defaults: dict[str, Any] = {}
    if "n_features_to_select" in accepted:
        defaults["n_features_to_select"] = k
    if seed is not None and "random_state" in accepted:
        defaults["random_state"] = seed
    if n_clusters is not None and "n_clusters" in accepted:
        defaults["n_clusters"] = n_clusters
    return cls(**{**defaults, **params})


def _write_atomic(frame, out: Path, force: bool) -> None:
    suffix = "".join(out.suffixes[-1:]).lower()
    if suffix not in (".csv", ".tsv", ".json"):
        raise CLIError(f"--out {out}: the extension must be .csv, .tsv or .json")
    if out.exists() and not force:
        raise CLIError(f"{out} exists; pass --force to overwrite it")
    if not out.parent.exists():
        raise CLIError(f"--out {out}: directory {out.parent} does not exist")
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            if suffix == ".json":
                json.dump(json.loads(frame.to_json(orient="records")), fh, indent=1)
                fh.write("\n")
            else:
                frame.to_csv(fh, index=False, sep="\t" if suffix == ".tsv" else ",")
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _cmd_methods(args) -> int:
    methods = list_methods()
    if args.json:
        print(json.dumps([m.as_dict() for m in methods], indent=1))
        return 0
    rows = [(m.stem, m.name, m.family, m.supervision, m.reference) for m in methods]
    _print_table(("stem", "estimator", "family", "supervision", "reference"), rows)
    return 0


def _cmd_select(args) -> int:
    info = get_method(args.method)
    data = _load(args.data, args.target, args.transpose)
    if info.supervision == "supervised" and data.y is None:
        raise CLIError(
            f"{info.name} is supervised: name the label column with --target "
            f"(or use a .mat/.npz file that holds labels)"
        )
    n_clusters = len(np.unique(data.y)) if data.y is not None else None
    est = _make_estimator(info, dict(args.param), k=args.k, n_clusters=n_clusters)
    y = data.y if info.supervision == "supervised" else None
    start = time.perf_counter()
    est.fit(data.X, y)
    elapsed = time.perf_counter() - start
    frame = scores_frame(est, feature_names=data.feature_names)
    out = Path(args.out)
    _write_atomic(frame, out, args.force)
    print(
        f"{info.name}: kept {int(est.support_.sum())} of {est.n_features_in_} features "
        f"in {elapsed:.3g} s -> {out}"
    )
    return 0


def _cmd_demo(args) -> int:
    from tqdm.auto import tqdm

    from sparsefs.datasets import load_default

    if args.n_noise < 0:
        raise CLIError(f"--n-noise {args.n_noise}: must be >= 0")
    data = load_default(n_noise_features=args.n_noise, random_state=args.seed)
    X = data.X
    if not args.raw:
        # Wine's features differ in scale by 1e4; the variance-driven unsupervised methods need
        # comparable columns, as in every paper's protocol. Supervised scores here are invariant.
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    truth = np.asarray(data.support)
    n_true = int(truth.sum())
    k = n_true if args.k is None else args.k
    if not 1 <= k <= data.X.shape[1]:
        raise CLIError(f"-k {k}: must be between 1 and {data.X.shape[1]}")
    methods = list_methods()
    if args.methods:
        methods = [get_method(s) for s in args.methods.split(",") if s.strip()]
    n_classes = len(np.unique(data.y))
    print(
        f"Data: {data.name}, {data.X.shape[0]} samples x {data.X.shape[1]} features, "
        f"{n_classes} classes; {n_true} real features at random positions, the rest noise"
        f"{'' if args.raw else ' (columns z-scored)'}."
    )
    print(f"Each method keeps k = {k} features.\n")
    rows, tops = [], []
    bar = tqdm(methods, desc="methods", unit="method", disable=args.no_progress or None,
               file=sys.stderr)
    for info in bar:
        bar.set_postfix_str(info.stem)
        est = _make_estimator(info, dict(info.demo_params), k=k, seed=args.seed,
                              n_clusters=n_classes)
        y = data.y if info.supervision == "supervised" else None
        start = time.perf_counter()
        est.fit(X, y)
        elapsed = time.perf_counter() - start
        kept = est.support_
        hits = int((kept & truth).sum())
        rows.append((info.name, info.family, info.supervision, int(kept.sum()),
                     f"{hits}/{n_true}", f"{hits / max(1, kept.sum()):.2f}", f"{elapsed:.3f}"))
        names = np.asarray(data.feature_names)[np.argsort(est.ranking_)[: min(k, 8)]]
        tops.append(f"  {info.name}: " + ", ".join(names))
    _print_table(("method", "family", "supervision", "kept", "real kept", "precision", "fit s"),
                 rows)
    print("\nTop features (noise features are named noise_NNN):")
    print("\n".join(tops))
    return 0


def _print_table(header, rows) -> None:
    cells = [tuple(map(str, header)), *[tuple(map(str, r)) for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for i, row in enumerate(cells):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))


_COMMANDS = {
    "methods": _cmd_methods,
    "select": _cmd_select,
    "demo": _cmd_demo,
    "compare": _harness.cmd_compare,
    "reproduce": _harness.cmd_reproduce,
}


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except (CLIError, ValueError, TypeError, FileNotFoundError, OSError, ImportError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"sparsefs: error: {msg}", file=sys.stderr)
        return 1
