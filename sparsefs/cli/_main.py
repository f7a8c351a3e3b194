"""Sub-commands ``methods``, ``select``, ``export`` and ``demo``; :func:`main`.

Only the standard library is imported at module level (numpy, pandas, scikit-learn and the
estimators are imported inside the commands), so ``sparsefs --help``, ``--version``, every
usage error and every refusal that needs only the arguments and the file system
(:mod:`sparsefs.cli._checks`) answer without loading the scientific stack.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from sparsefs import __version__
from sparsefs.cli import _checks, _harness, _standing
from sparsefs.cli._checks import (
    meta_path,
    parse_count,
    parse_k,
    parse_seed,
    resolve_data,
)
from sparsefs.cli._common import (
    DEFAULT_DATA,
    CLIError,
    _first_line,
    add_progress_options,
    emit_note,
    notes,
    progress_enabled,
    terminate_cleanly,
)
from sparsefs.cli._common import print_table as _print_table
from sparsefs.cli._error_control import (
    add_error_control_arguments,
    error_control_output,
    wrap_for_error_control,
)
from sparsefs.cli._stability import (
    add_stability_arguments,
    stability_output,
    wrap_for_stability,
)
from sparsefs.utils._registry import TARGET_WORDS, get_method, list_methods

__all__ = ["main", "meta_path", "resolve_data"]

#: ``select`` prints a note when the method's own rule (no ``-k``) keeps at least this fraction.
KEEPS_MOST = 0.5


# ------------------------------------------------------------------------------------------
# argument types and shared options
# ------------------------------------------------------------------------------------------


def _parse_param(text: str) -> tuple[str, Any]:
    import ast

    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r}: expected KEY=VALUE")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


def _own_rules_epilog() -> str:
    lines = ["what -k auto (or no -k) keeps, per method (the method's own rule):"]
    for m in list_methods():
        lines.append(_wrapped(f"{m.stem}: {m.own_rule}"))
    return "\n".join(lines)


def _wrapped(text: str) -> str:
    """One indented entry of a list, wrapped at 79 columns."""
    return textwrap.fill(text, width=79, initial_indent="  ", subsequent_indent="      ",
                         break_on_hyphens=False)


# ------------------------------------------------------------------------------------------
# the parser
# ------------------------------------------------------------------------------------------


def _add_select_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``select``, by group. Each option's value is checked by its argparse
    type (``_checks.parse_*``); options that combine with others or name files are checked by
    the ``@select_check`` functions of :mod:`sparsefs.cli._checks`, before any heavy import.
    Options that change *which* features are kept (stability selection, error control) belong
    to the "selection rule" group and are applied by :func:`_selection_rule`."""
    data = p.add_argument_group("data")
    data.add_argument("data", help=f"a .mat/.csv/.tsv/.parquet/.npz/.h5ad file, '{DEFAULT_DATA}'"
                      " (the embedded data), a benchmark name such as ALLAML (found via "
                      "SPARSEFS_DATA) or a make_* generator")
    data.add_argument("--target", "-t", help="label column (CSV/TSV/Parquet) or obs key (h5ad): "
                      "class labels, or a continuous outcome (numbers with decimals are read "
                      "as continuous; see --continuous)")
    data.add_argument("--continuous", action="store_true",
                      help="read --target as a continuous outcome even when its values are "
                      "whole numbers (ages, counts), not as classes")
    data.add_argument("--time", metavar="COL", help="survival outcome: the follow-up time "
                      "column (CSV/TSV/Parquet) or obs key (h5ad); with --event")
    data.add_argument("--event", metavar="COL", help="survival outcome: the event column (1 or "
                      "True = the event was observed, 0 or False = censored); with --time")
    data.add_argument("--transpose", action="store_true", help="the file is features x samples")
    data.add_argument("--groups", metavar="COLUMN", default=None,
                      help="column (CSV/TSV/Parquet), obs key (h5ad) or variable (.mat/.npz) "
                      "with the donor / sample of every row: --fdr/--fwer, --stability, "
                      "-m error_control and -m stability then work at the donor level")

    method = p.add_argument_group("method")
    method.add_argument("--method", "-m", required=True,
                        help="stem or class name (see 'sparsefs methods')")
    method.add_argument("--param", "-p", type=_parse_param, action="append", default=[],
                        metavar="KEY=VALUE", help="an estimator parameter (repeatable)")
    method.add_argument("--seed", type=parse_seed, default=0,
                        help="random_state of the method and seed of generated data, an integer "
                        "in [0, 2**32 - 1] (default 0; recorded in the output's .meta.json)")

    rule = p.add_argument_group("selection rule")
    rule.add_argument("-k", type=parse_k, default=None, metavar="K",
                      help="features to select: a count >= 1, a fraction in (0, 1], or 'auto' "
                      "(the default: the method's own rule, listed below); not with --fdr or "
                      "--fwer, which decide the count")
    add_stability_arguments(rule)
    add_error_control_arguments(rule)

    out = p.add_argument_group("output")
    out.add_argument("--out", "-o", required=True,
                     help="output file (.csv, .tsv or .json), checked before the data is read; "
                     "the run's settings go to OUT.meta.json beside it (genes.csv -> "
                     "genes.csv.meta.json); never the input file, even with --force")
    out.add_argument("--write-h5ad", metavar="OUT.h5ad", default=None,
                     help="with a .h5ad DATA: also write a copy of it with the results added "
                     "as sparsefs.tl.select does (adata.var columns, adata.uns / varm under "
                     "'sparsefs'); written atomically, never over the input")
    out.add_argument("--force", action="store_true",
                     help="overwrite existing output files (never an input file)")
    add_progress_options(p)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sparsefs",
        description="Sparse feature selection for high-dimensional data.",
    )
    parser.add_argument("--version", action="version", version=f"sparsefs {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("methods", help="list the registered methods, their own rule and cost")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p = sub.add_parser(
        "select",
        help="fit one method on a data file and write every feature's score and rank",
        description=textwrap.fill(
            "Fit one method and write a table of features (feature, index, score, rank, "
            "selected), CSV, TSV or JSON by the output's extension, and the run's settings "
            "(method, parameters, seed, data) to OUT.meta.json. Two runs with the same arguments "
            "write identical files.", width=79),
        epilog=_own_rules_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_select_arguments(p)

    p = sub.add_parser(
        "export",
        help="write a data set (the embedded default, a benchmark set, a generator, a file) as "
        "a table",
        description="Write DATA as a table with one row per sample: the features as columns "
        "and the labels as the column --label. Any DATA that select reads: 'default', a "
        "benchmark name, a make_* generator or a file (to convert it).",
    )
    p.add_argument("data", help=f"'{DEFAULT_DATA}', a benchmark name, a make_* generator or a "
                   "data file")
    p.add_argument("--out", "-o", required=True,
                   help="output table (.csv, .tsv, .parquet; .csv.gz compresses); never the "
                   "input file")
    p.add_argument("--label", default="label",
                   help="name of the label column written (default 'label')")
    p.add_argument("--target", "-t", help="label column of a table DATA (or obs key of .h5ad)")
    p.add_argument("--transpose", action="store_true", help="the file is features x samples")
    p.add_argument("--seed", type=parse_seed, default=0,
                   help="seed of the embedded default's noise features and of generators "
                   "(default 0)")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")

    p = sub.add_parser(
        "demo",
        help="run every registered method on the embedded default data (no download)",
        description="The main job: every registered method on scikit-learn's wine data widened "
        "with row-permuted noise features, so the true features are known.",
    )
    p.add_argument("-k", type=parse_count(1), default=None, metavar="K",
                   help="features each method keeps (default: the number of true features; "
                   "the class-specific methods keep K per class, so their union is larger)")
    p.add_argument("--methods", help="comma-separated stems (default: all)")
    p.add_argument("--n-noise", type=parse_count(0), default=487,
                   help="noise features added (default 487)")
    p.add_argument("--seed", type=parse_seed, default=0,
                   help="random seed for data and methods")
    p.add_argument("--raw", action="store_true",
                   help="fit on the raw features (default: z-scored columns, as the papers do)")
    add_progress_options(p)

    _harness.add_parsers(sub)
    _standing.add_parser(sub)
    return parser


# ------------------------------------------------------------------------------------------
# data: one resolution for every command
# ------------------------------------------------------------------------------------------


_TEXT_TABLES = (".csv", ".tsv", ".txt")


def _check_text_table(path: Path) -> None:
    """Header-only and empty CSV/TSV files, reported before pandas reads them."""
    if path.suffix.lower() not in _TEXT_TABLES:
        return
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = [ln for _, ln in zip(range(2), (ln for ln in fh if ln.strip()))]
    if not lines:
        raise CLIError(f"{path}: the file is empty")
    if len(lines) == 1:
        raise CLIError(f"{path}: only a header line, no data rows")


def _load(ref: _checks.DataRef, target: str | None, transpose: bool, seed: int,
          time_col: str | None = None, event_col: str | None = None,
          groups: str | None = None):
    """Load a located DATA argument with the harness's loaders, errors in CLI wording; then
    refuse missing and infinite values and missing labels, naming the file, row and column.
    ``time_col``/``event_col`` name a survival outcome's columns, ``groups`` the donor column
    (their combinations were checked by :mod:`sparsefs.cli._checks`)."""
    from sparsefs.harness import DataSpec, load_dataset

    if ref.kind == "file":
        _check_text_table(ref.path)
        spec = DataSpec(path=str(ref.path), target=target, transpose=transpose, time=time_col,
                        event=event_col, groups=groups)
    else:
        spec = DataSpec.from_string(ref.resolved)
    try:
        data = load_dataset(spec, seed=seed)
    except FileNotFoundError as exc:
        raise CLIError(f"no such data file: {ref.argument!r} ({_first_line(exc)})") from None
    except ValueError as exc:
        raise CLIError(_table_error(exc, spec.path, target)) from None
    _check_values(data, ref, target, transpose)
    return data


def _where(ref: _checks.DataRef, names, i: int, j: int, transpose: bool) -> str:
    """Row ``i`` and column ``j`` of X in the file's own terms."""
    name = str(names[j])
    table = ref.extension.split(".")[1] in ("csv", "tsv", "txt", "parquet") if ref.extension \
        else False
    if table and not transpose:
        line = f" (line {i + 2})" if ref.extension != ".parquet" else ""
        return f"column {name!r}, data row {i + 1}{line}"
    if table and transpose:
        line = f" (line {j + 2})" if ref.extension != ".parquet" else ""
        return f"row {name!r}{line}, sample column {i + 1}"
    return f"sample {i + 1}, feature {j + 1} ({name})"


def _check_values(data, ref: _checks.DataRef, target: str | None, transpose: bool) -> None:
    """Missing (NaN, empty cells) or infinite values and missing labels: one clear line."""
    import numpy as np
    import scipy.sparse as sp

    X = data.X
    source = ref.argument
    rows = None
    if sp.issparse(X):
        coo = X.tocoo()
        bad = ~np.isfinite(coo.data)
        rows, cols, values = coo.row[bad], coo.col[bad], coo.data[bad]
    elif np.issubdtype(np.asarray(X).dtype, np.number):
        bad = ~np.isfinite(X)
        (rows, cols), values = np.nonzero(bad), X[bad]
    if rows is not None and rows.size:
        _raise_nonfinite(source, values[0], int(rows.size),
                         _where(ref, data.feature_names, int(rows[0]), int(cols[0]), transpose))
    y = data.y
    if y is not None:
        y = np.asarray(y)
        if y.dtype.kind == "f":
            missing = np.isnan(y)
        elif y.dtype.kind == "O":
            missing = np.array([v is None or (isinstance(v, float) and v != v) for v in y])
        else:
            missing = np.zeros(y.shape, dtype=bool)
        if missing.any():
            i = int(np.flatnonzero(missing)[0])
            label = f"the label column {target!r}" if target else "the labels"
            line = (f" (line {i + 2})" if ref.extension.split(".")[1:2] in (["csv"], ["tsv"],
                                                                             ["txt"]) else "")
            raise CLIError(f"{source}: {label} is empty in data row {i + 1}{line}; "
                           f"{int(missing.sum())} row(s) have no label: drop them first")


def _raise_nonfinite(source: str, value, count: int, where: str) -> None:
    import numpy as np

    kind = "a missing value (an empty cell or NaN)" if np.isnan(value) else \
        f"an infinite value ({value})"
    more = f"; {count} such cells in all" if count > 1 else ""
    raise CLIError(f"{source}: {kind} in {where}{more}: drop or impute them first")


def _table_error(exc: ValueError, path: str | None, target: str | None) -> str:
    """A loader error in the command line's words: the file, row and column where known."""
    text = _first_line(exc)
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text)
    if m and path:
        return (f"{path}: line {m.group(2)} has {m.group(3)} fields but the header has "
                f"{m.group(1)}; check the delimiter and quoting")
    m = re.search(r"non-numeric feature column\(s\) \[([^\]]*)\]", text)
    if m and path:
        cols = [c.strip().strip("'\"") for c in m.group(1).split(",") if c.strip()]
        where = _first_non_numeric(Path(path), cols[0]) if cols else None
        hint = ("name the label column with --target" if target is None
                else "drop or encode these columns first")
        return (f"{path}: non-numeric feature column(s) {', '.join(cols)}"
                + (f" ({where})" if where else "") + f"; {hint}")
    return text


def _first_non_numeric(path: Path, column: str) -> str | None:
    """``row R: 'value'`` of the first non-numeric cell of ``column`` in a CSV/TSV file."""
    import pandas as pd

    if path.suffix.lower() not in _TEXT_TABLES:
        return None
    sep = "\t" if path.suffix.lower() == ".tsv" else None
    try:
        frame = pd.read_csv(path, sep=sep, engine="python", usecols=[column], dtype=str)
    except (ValueError, OSError):
        return None
    values = frame[column]
    bad = pd.to_numeric(values, errors="coerce").isna() & values.notna()
    if not bad.any():
        return None
    i = int(bad.to_numpy().argmax())
    return f"column {column!r}, data row {i + 1}: {values.iloc[i]!r}"


# ------------------------------------------------------------------------------------------
# estimators and output
# ------------------------------------------------------------------------------------------


def _make_estimator(info, params: dict, *, k=None, seed=None, n_clusters=None):
    from sparsefs.utils._factory import make_estimator

    defaults: dict[str, Any] = {"n_features_to_select": k}
    if seed is not None:
        defaults["random_state"] = seed
    if n_clusters is not None:
        defaults["n_clusters"] = n_clusters
    try:
        return make_estimator(info.estimator, params, defaults=defaults, what=info.name)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


#: the CLI flag of an estimator parameter the command line sets itself
_PARAM_FLAGS = {"n_features_to_select": "-k", "random_state": "--seed"}


def _check_param_values(est, params: dict) -> None:
    """scikit-learn's parameter validation before any data is read, the message naming the
    command line's flag (``-p fdr=2``, ``-k``, ``--seed``)."""
    validate = getattr(est, "_validate_params", None)
    if validate is None:
        return
    try:
        validate()
    except (ValueError, TypeError) as exc:
        text = _first_line(exc)
        m = re.match(r"The '(\w+)' parameter of \w+ (must be .*)$", text)
        if not m:
            raise CLIError(text) from None
        name, rule = m.groups()
        flag = (f"-p {name}={params[name]!r}" if name in params
                else _PARAM_FLAGS.get(name, f"-p {name}"))
        raise CLIError(f"{flag}: {rule}") from None


def _selection_rule(est, args: argparse.Namespace):
    """Apply the "selection rule" options to the configured estimator (``-k`` is already its
    ``n_features_to_select``); returns the estimator to fit. Rules that wrap the estimator
    (stability selection, error control) are added here; their flag combinations were checked
    by :func:`sparsefs.cli._checks.plan_select`."""
    return wrap_for_error_control(wrap_for_stability(est, args), args)


def _replace_atomic(target: Path, write, *, prefix: str, suffix: str) -> None:
    """``write(tmp)`` into a temporary file beside ``target``, then rename it into place; the
    temporary file is removed when anything fails."""
    fd, tmp = tempfile.mkstemp(suffix=suffix, prefix=prefix, dir=target.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_text_atomic(text: str, out: Path) -> None:
    """Write to a temporary file beside ``out`` and rename it into place."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)

    try:
        _replace_atomic(out, write, prefix=f".{out.name}.", suffix=".tmp")
    except OSError as exc:
        raise CLIError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None


def _frame_text(frame, suffix: str) -> str:
    if suffix == ".json":
        return json.dumps(json.loads(frame.to_json(orient="records")), indent=1) + "\n"
    return frame.to_csv(index=False, sep="\t" if suffix == ".tsv" else ",", lineterminator="\n")


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return _json_value(item())
        except (TypeError, ValueError):
            pass
    return repr(value)


def _flagify(message: str) -> str:
    """Name the command line's flags instead of the library's parameters; drop OS noise."""
    message = re.sub(r"\[Errno \d+\]\s*", "", message)
    message = re.sub(r"\bn_features_to_select=(\S+?)([;,)]|\s|$)", r"-k \1\2", message)
    message = message.replace("a fraction in (0, 1], or None", "a fraction in (0, 1], or auto")
    message = re.sub(r"\btarget=\.\.\.", "--target COL", message)
    message = re.sub(r"\btarget=(\S+?)([;,)]|\s|$)", r"--target \1\2", message)
    message = re.sub(r"\btranspose=True", "--transpose", message)
    message = re.sub(r"\brandom_state=(\S+?)([;,)]|\s|$)", r"--seed \1\2", message)
    message = re.sub(r"[^\s'\"]*/\.[^/\s'\"]+\.[A-Za-z0-9_]+\.tmp\b", "(temporary file)", message)
    return message


# ------------------------------------------------------------------------------------------
# commands
# ------------------------------------------------------------------------------------------


def _cmd_methods(args) -> int:
    methods = list_methods()
    if args.json:
        print(json.dumps([m.as_dict() for m in methods], indent=1))
        return 0
    rows = [(m.stem, m.name, m.family, m.supervision,
             "/".join(TARGET_WORDS[t] for t in m.targets) if m.supervision == "supervised" else "-",
             "/".join(m.inputs), m.reference)
            for m in methods]
    _print_table(("stem", "estimator", "family", "supervision", "targets", "input",
                  "reference"), rows)
    print("\nWithout -k (or with -k auto) each method applies its own rule:")
    for m in methods:
        print(_wrapped(f"{m.stem}: {m.own_rule}"))
    costly = [m for m in methods if m.cost]
    if costly:
        print("\nCost of a fit with the defaults, where it is long:")
        for m in costly:
            print(_wrapped(f"{m.stem}: {m.cost}"))
    aliases = [f"{a} -> {m.stem}" for m in methods for a in m.aliases]
    if aliases:
        print(f"\nOld stems still accepted: {', '.join(aliases)}.")
    return 0


class _Stages:
    """``--progress`` for ``select``: one bar over the stages (read, fit, write), so a fast
    method shows its progress too; an estimator's own bar (``verbose``) runs inside "fit"."""

    def __init__(self, enabled: bool, name: str):
        self.bar = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=3, desc=f"{name}: read data", unit="step", file=sys.stderr,
                            mininterval=0, miniters=1,
                            bar_format="{desc} [{n_fmt}/{total_fmt} steps, {elapsed}]")

    def next(self, desc: str) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_description_str(desc)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.update(self.bar.total - self.bar.n)
            self.bar.close()


def _cmd_select(args, argv: list[str]) -> int:
    plan = _checks.plan_select(args)  # arguments and file system: no heavy import yet
    info, params = plan.method, plan.params
    _check_param_values(_make_estimator(info, params, k=args.k, seed=args.seed), params)
    show = progress_enabled(args)
    stages = _Stages(show, info.name)
    try:
        return _select_body(plan, argv, stages, show)
    finally:
        stages.close()


def _select_body(plan: _checks.SelectPlan, argv: list[str], stages: _Stages, show: bool) -> int:
    args, info, params = plan.args, plan.method, plan.params
    data = _load(plan.data, args.target, args.transpose, args.seed, args.time, args.event,
                 args.groups)
    if plan.uses_labels and data.y is None:
        raise CLIError(
            f"{info.name} is supervised: the data has no labels; name the label column with "
            "--target, or the survival columns with --time and --event (or use a .mat/.npz "
            "file that holds labels)"
        )
    import numpy as np

    from sparsefs.utils._results import scores_frame

    n, p = data.X.shape
    outcome = _outcome_kind(data.y, args)
    n_clusters = (len(np.unique(data.y)) if data.y is not None and outcome is None else None)
    est = _make_estimator(info, params, k=args.k, seed=args.seed, n_clusters=n_clusters)
    if outcome == "regression" and args.continuous and "target_type" in est.get_params():
        est.set_params(target_type="regression")
    est = _selection_rule(est, args)
    if outcome == "regression" and args.continuous and "target_type" in est.get_params():
        est.set_params(target_type="regression")  # a wrapper (error control) reads y too
    if show and "verbose" in est.get_params() and "verbose" not in params:
        est.set_params(verbose=True)
    if info.slow_size is not None and n * p >= info.slow_size and not params:
        emit_note(f"{info.name} with its defaults is slow at {n} x {p} ({info.cost}); "
                  + ("progress is shown below." if show and "verbose" in est.get_params()
                     else "pass --progress to see it advance."))
    y = data.y if plan.uses_labels else None
    stages.next(f"{info.name}: fit on {n} x {p}")
    fit_kw = _groups_for(est, data, args)
    start = time.perf_counter()
    est.fit(data.X, y, **fit_kw)
    elapsed = time.perf_counter() - start
    _checks.plan_select(args)  # nothing appeared (or changed) meanwhile
    stages.next(f"{info.name}: write {plan.out}")
    frame = scores_frame(est, feature_names=data.feature_names, outputs=True)
    frame, stability = stability_output(est, frame, data.X, y, data.feature_names, args)
    frame, error_control = error_control_output(est, frame)
    kept = int(est.support_.sum())
    meta = {
        "sparsefs": __version__,
        "command": "sparsefs " + " ".join(argv),
        "data": {"argument": args.data, "resolved": plan.data.resolved,
                 "name": data.name, "n_samples": n, "n_features": p,
                 "target": args.target, "transpose": args.transpose,
                 **({"time": args.time, "event": args.event} if args.time else {}),
                 **({"outcome": outcome} if outcome else {})},
        "method": info.stem,
        "estimator": info.import_path.replace(":", "."),
        "params": _json_value(est.get_params(deep=False)),
        "seed": args.seed,
        "index": "0-based column of X (a .mat file's MATLAB column is index + 1)",
        "k": args.k,
        "n_selected": kept,
        **({"groups": {"column": args.groups, "design": getattr(est, "design_", None),
                       "n_groups": len(set(data.groups.tolist()))}} if fit_kw else {}),
        **({"stability": _json_value(stability)} if stability else {}),
        **({"error_control": _json_value(error_control)} if error_control else {}),
    }
    _write_text_atomic(_frame_text(frame, plan.out.suffix.lower()), plan.out)
    _write_text_atomic(json.dumps(meta, indent=1, sort_keys=True) + "\n", plan.meta)
    rule = (f" (stable over {stability['n_resamples']} half-samples)" if stability else "")
    if error_control:
        rule += (f" ({error_control['procedure']} at {error_control['rate']} "
                 f"{error_control['level']:g})")
    if plan.h5ad_out is not None:
        _write_h5ad(est, info, args, plan.data.path, plan.h5ad_out)
    if fit_kw:
        rule += f" ({est.design_} design, {args.groups} as the unit)"
    stages.close()
    print(f"{info.name}{rule}: kept {kept} of {est.n_features_in_} features in {elapsed:.3g} s "
          f"(seed {args.seed}) -> {plan.out}"
          + (f", {plan.h5ad_out}" if plan.h5ad_out is not None else ""))
    if args.k is None and p >= 10 and kept >= KEEPS_MOST * p and not error_control:
        emit_note(f"{info.name}'s own rule kept {kept} of {p} features (see "
                  "'sparsefs select --help'); pass -k to keep fewer.")
    return 0


def _groups_for(est, data, args) -> dict:
    """``{"groups": ...}`` for ``fit`` when ``--groups`` is given: only the trust layer takes
    donor labels (the error-control and stability selectors)."""
    if args.groups is None:
        return {}
    import inspect

    if "groups" not in inspect.signature(est.fit).parameters:
        raise CLIError(
            f"--groups {args.groups}: {type(est).__name__} does not use groups; they make "
            "p-values, q-values and stability frequencies donor-level: add --fdr/--fwer or "
            "--stability, or use -m error_control / -m stability"
        )
    return {"groups": data.groups}


def _outcome_kind(y, args) -> str | None:
    """``"survival"`` (--time/--event), ``"regression"`` (--continuous, or a --target of
    numbers that scikit-learn's type_of_target calls continuous), or None (class labels)."""
    if args.time is not None:
        return "survival"
    if y is None or args.target is None:
        return None
    if args.continuous:
        import numpy as np

        if np.asarray(y).dtype.kind not in "iuf":
            raise CLIError(f"--continuous: --target {args.target!r} holds non-numeric values")
        return "regression"
    from sklearn.utils.multiclass import type_of_target

    return "regression" if type_of_target(y) == "continuous" else None


def _write_h5ad(est, info, args, source: Path, target: Path) -> None:
    """A copy of the input .h5ad with the fitted selection written in, atomically."""
    try:
        import anndata
    except ImportError as exc:  # pragma: no cover - anndata is needed to read .h5ad at all
        raise CLIError('--write-h5ad needs anndata: pip install "sparsefs[anndata]"') from exc
    from sparsefs.tl import write_selection

    adata = anndata.read_h5ad(source)
    outcome = getattr(est, "target_type_", "classification") != "classification"
    groupby = args.target if args.target in adata.obs.columns and not outcome else None
    # donor-level p-values (the estimator was fitted with groups=) are recorded with the
    # donors' column; the per-group view (classes only) gets donor-level tests too
    write_selection(adata, est, info=info, groupby=groupby, random_state=args.seed,
                    sample_key=args.groups if groupby is not None or outcome else None,
                    _target={"target": args.target if outcome else None, "time": args.time,
                             "event": args.event})
    _replace_atomic(target, adata.write_h5ad, prefix=".sparsefs-", suffix=".h5ad")


def _cmd_export(args) -> int:
    ref, out = _checks.plan_export(args)
    import numpy as np
    import pandas as pd
    import scipy.sparse as sp

    data = _load(ref, args.target, args.transpose, args.seed)
    names = [str(n) for n in data.feature_names]
    if args.label in names:
        raise CLIError(f"--label {args.label}: a feature has that name; choose another")
    X = data.X.toarray() if sp.issparse(data.X) else np.asarray(data.X)
    frame = pd.DataFrame(X, columns=names)
    if data.y is not None:
        frame[args.label] = data.y
    _checks.plan_export(args)  # nothing appeared meanwhile

    def write(tmp: str) -> None:
        if out.name.lower().endswith(".parquet"):
            frame.to_parquet(tmp, index=False)
        else:
            sep = "\t" if ".tsv" in out.name.lower() else ","
            frame.to_csv(tmp, index=False, sep=sep, lineterminator="\n")

    _replace_atomic(out, write, prefix=f".{out.name}.", suffix="".join(out.suffixes) or ".tmp")
    labels = "" if data.y is None else f" and the labels as column {args.label!r}"
    print(f"Wrote {data.X.shape[0]} samples x {data.X.shape[1]} features{labels} to {out}")
    return 0


#: The two lines ``demo`` prints about its design.
DEMO_DESIGN = (
    "Design: each noise feature is a real column with its rows permuted: the same distribution, "
    "no link to the classes.\nUnsupervised per-feature scores can rank a bimodal noise column "
    "above a real one, so low recovery there is expected."
)


def _warm_up(info, X, y, k: int, seed: int, n_classes: int) -> None:
    """Fit once on a small slice so that numba compilation (or loading its cache) is not
    counted in the timed fit. A warm-up that fails is ignored: the timed fit reports errors."""
    import warnings

    import numpy as np

    # every column (some kernels pick their code path by the number of columns), few rows
    rows = np.sort(np.random.default_rng(seed).permutation(X.shape[0])[:40])
    try:
        est = _make_estimator(info, dict(info.demo_params), k=k, seed=seed,
                              n_clusters=n_classes)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X[rows], None if y is None else y[rows])
    except Exception:  # a failed warm-up only means the timing includes compilation
        return


def _cmd_demo(args) -> int:
    import warnings

    import numpy as np
    from tqdm.auto import tqdm

    from sparsefs.datasets import load_default

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
        try:
            methods = [get_method(s) for s in args.methods.split(",") if s.strip()]
        except ValueError as exc:
            raise CLIError(str(exc)) from None
    n_classes = len(np.unique(data.y))
    print(
        f"Data: {data.name}, {data.X.shape[0]} samples x {data.X.shape[1]} features, "
        f"{n_classes} classes; {n_true} real features at random positions, the rest noise"
        f"{'' if args.raw else ' (columns z-scored)'}."
    )
    print(DEMO_DESIGN)
    print(f"Each method keeps k = {k} features (the class-specific ones: k per class, so their "
          "union is larger).\nFit times exclude numba compilation (a warm-up fit runs first).\n")
    results: dict[str, list] = {"supervised": [], "unsupervised": []}
    tops: dict[str, list] = {"supervised": [], "unsupervised": []}
    n_top = min(k, 8)
    notes: list[str] = []
    bar = tqdm(methods, desc="methods", unit="method", disable=not progress_enabled(args),
               file=sys.stderr)
    for info in bar:
        bar.set_postfix_str(info.stem)
        y = data.y if info.supervision == "supervised" else None
        _warm_up(info, X, y, k, args.seed, n_classes)
        est = _make_estimator(info, dict(info.demo_params), k=k, seed=args.seed,
                              n_clusters=n_classes)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)  # ConvergenceWarning and the like
            start = time.perf_counter()
            est.fit(X, y)
            elapsed = time.perf_counter() - start
        for w in caught:
            note = f"  {info.name}: {w.category.__name__}: {str(w.message).splitlines()[0]}"
            if note not in notes:
                notes.append(note)
        kept = est.support_
        hits = int((kept & truth).sum())
        results[info.supervision].append(
            (info.name, info.family, int(kept.sum()), f"{hits}/{n_true}",
             f"{hits / max(1, kept.sum()):.2f}", f"{elapsed:.3f}"))
        names = np.asarray(data.feature_names)[np.argsort(est.ranking_, kind="stable")[:n_top]]
        tops[info.supervision].append(f"  {info.name}: " + ", ".join(names))
    for group in ("supervised", "unsupervised"):
        if not results[group]:
            continue
        title = ("Supervised (labels used)" if group == "supervised"
                 else "Unsupervised (labels not used; see the design note above)")
        print(f"{title}:")
        _print_table(("method", "family", "kept", "real kept", "precision", "fit s"),
                     results[group])
        print()
    print(f"Top {n_top} features by rank (of the {k} kept; noise features are named noise_NNN):")
    for group in ("supervised", "unsupervised"):
        print("\n".join(tops[group]))
    if notes:
        print("\nWarnings raised by the fits above:")
        print("\n".join(notes))
    return 0



_COMMANDS = {
    "methods": _cmd_methods,
    "export": _cmd_export,
    "demo": _cmd_demo,
    "compare": _harness.cmd_compare,
    "reproduce": _harness.cmd_reproduce,
    "standing": _standing.cmd_standing,
}


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        with terminate_cleanly(), notes(quiet=False):
            if args.command == "select":
                return _cmd_select(args, argv)
            return _COMMANDS[args.command](args)
    except BrokenPipeError:  # e.g. `sparsefs methods | head`: the reader left; stay quiet
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (CLIError, ValueError, TypeError, FileNotFoundError, OSError, ImportError) as exc:
        print(f"sparsefs: error: {_flagify(_first_line(exc))}", file=sys.stderr)
        return 1
