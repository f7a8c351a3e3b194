"""Every check that needs only the arguments and the file system, before any heavy import.

This module imports the standard library and the method registry only (no numpy, pandas,
scikit-learn or numba), so a refusal answers in the time it takes to start Python
(``sparsefs/cli/tests/test_refusals.py`` checks the modules loaded; ``benchmarks/
bench_cli_refusals.py`` prints the times). It has three parts:

* **argument types** (``parse_*``): argparse ``type=`` callables; a bad value is a usage error
  (exit status 2) whose message names the flag (argparse adds ``argument -k:``);
* **data and outputs**: :func:`locate_data` resolves a DATA argument as every command does and
  says what is missing; :class:`OutputPlan` checks every file a command will write: the folder
  exists and takes new files (probed by creating one), it is not a directory, it never
  resolves to an input file (same file by :func:`os.path.samefile`: through symlinks, hard
  links, relative paths; whatever ``--force`` says), two outputs never name the same file, and
  an existing file needs ``--force``;
* **the plan of a command** (:func:`plan_select`, :func:`plan_export`): the checks above plus
  the rules that combine flags. A new ``select`` option adds its argparse type here (or reuses
  one) and, when it combines with other flags or names a file, one function decorated with
  :func:`select_check`; see docs/cli.md, "Adding an option".

Every refusal raises :class:`~sparsefs.cli._common.CLIError` (one line, exit status 1) or
:class:`argparse.ArgumentTypeError` (usage error, exit status 2).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from sparsefs.cli._common import DEFAULT_DATA, CLIError
from sparsefs.utils._registry import MethodInfo, get_method

__all__ = [
    "ASU_NAMES",
    "DATA_EXTENSIONS",
    "MAX_SEED",
    "DataRef",
    "OutputPlan",
    "SelectPlan",
    "convert",
    "error_flags_refusal",
    "estimator_param_names",
    "locate_data",
    "meta_path",
    "parse_count",
    "parse_cv",
    "parse_k",
    "parse_k_grid",
    "parse_level",
    "parse_open_unit",
    "parse_seed",
    "parse_train_size",
    "plan_export",
    "plan_select",
    "resolve_data",
    "select_check",
]

#: The largest ``--seed``: numpy's seeds are 32-bit unsigned integers.
MAX_SEED = 2**32 - 1

#: Every file-name ending the loaders read (``sparsefs.datasets.SUPPORTED_EXTENSIONS``; a test
#: keeps the two equal).
DATA_EXTENSIONS: tuple[str, ...] = (
    ".mat",
    *[t + c for t in (".csv", ".tsv", ".txt") for c in ("", ".gz", ".bz2", ".xz")],
    ".parquet",
    ".npz",
    ".h5ad",
)
#: Formats whose labels are inside the file by default (``Y``/``gnd``/``y``); tables and
#: AnnData files name their label column with ``--target``.
LABELLED_EXTENSIONS = (".mat", ".npz")

#: The scikit-feature (ASU) benchmark names, lower-cased with ``-`` as ``_`` (and without
#: ``.mat``), to the canonical name; the remote file names are accepted too. A test keeps this
#: equal to ``sparsefs.datasets.ASU_DATASETS``.
ASU_NAMES: dict[str, str] = {
    **{n.lower(): n for n in (
        "ALLAML", "leukemia", "GLIOMA", "lung_discrete", "lymphoma", "colon", "TOX_171",
        "arcene", "COIL20", "ORL", "Yale", "warpAR10P", "orlraws10P", "pixraw10P", "Isolet",
        "madelon", "BASEHOCK", "PCMAC")},
    "lung_small": "lung_discrete",
}

#: ``select --out`` extensions, and the suffix of the settings file beside the table.
TABLE_EXTENSIONS = (".csv", ".tsv", ".json")
META_SUFFIX = ".meta.json"
PLOT_EXTENSIONS = (".png", ".pdf", ".svg")


# ------------------------------------------------------------------------------------------
# argument types (usage errors, exit status 2)
# ------------------------------------------------------------------------------------------


def parse_k(text: str) -> int | float | None:
    """``-k``: a count >= 1, a fraction in (0, 1], or ``auto`` (None, the method's own rule)."""
    value = text.strip().lower()
    if value in ("auto", "none"):
        return None
    try:
        k = int(value)
    except ValueError:
        try:
            k = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r}: give a count (20), a fraction (0.1) or 'auto'") from None
        if not 0.0 < k <= 1.0:
            raise argparse.ArgumentTypeError(
                f"{text}: a fraction of the features must be in (0, 1]; a count must be a "
                "whole number >= 1") from None
        return k
    if k < 1:
        raise argparse.ArgumentTypeError(
            f"{text}: give a count >= 1, a fraction in (0, 1] or 'auto'")
    return k


def convert(kind: Callable[[str], Any], text: str, message: str) -> Any:
    """``kind(text)`` (``int``, ``float``), or the usage error ``message`` when ``text`` is not
    one."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(message) from None


def parse_seed(text: str) -> int:
    """``--seed``: an integer in [0, 2**32 - 1]."""
    value = convert(int, text, f"{text!r}: give an integer seed")
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(
            f"{text}: a seed is an integer in [0, {MAX_SEED}] (2**32 - 1)")
    return value


def parse_count(minimum: int = 1, *, all_cpus: bool = False) -> Callable[[str], int]:
    """An integer >= ``minimum`` (``all_cpus``: or -1, every CPU)."""

    def parse(text: str) -> int:
        value = convert(int, text, f"{text!r} is not an integer")
        if value < minimum and not (all_cpus and value == -1):
            raise argparse.ArgumentTypeError(
                f"{text}: must be >= {minimum}" + (" (or -1 for all CPUs)" if all_cpus else ""))
        return value

    return parse


def parse_open_unit(what: str, flag: str = "") -> Callable[[str], float]:
    """A ``what`` (level, fraction) in (0, 1); ``flag`` (``--fdr``) opens the messages."""

    def parse(text: str) -> float:
        name = f"{flag} {text!r}" if flag else repr(text)
        value = convert(float, text, f"{name}: give a {what} in (0, 1)")
        if not 0 < value < 1:
            raise argparse.ArgumentTypeError(f"{name if flag else text}: give a {what} in (0, 1)")
        return value

    return parse


#: A level in (0, 1): ``--fdr``, ``--fwer``.
parse_level = parse_open_unit("level")
#: ``--train-size``: a fraction in (0, 1).
parse_train_size = parse_open_unit("fraction")


def parse_k_grid(text: str) -> tuple[int, ...]:
    """The ``compare --k`` grid: ``'1:80'``, ``'1:80:5'``, ``'5,10,20'`` (and mixtures).

    The same grammar and the same result as ``sparsefs.harness._spec.parse_k_grid`` on a
    string (a test compares the two), without importing the harness.
    """
    out: list[int] = []
    for part in (p.strip() for p in str(text).split(",")):
        if not part:
            continue
        if ":" in part:
            try:
                nums = [int(x) for x in part.split(":")]
            except ValueError:
                raise ValueError(
                    f"k grid {part!r}: a range is 'first:last' or 'first:last:step' with "
                    "integers, e.g. '1:80'.") from None
            if len(nums) not in (2, 3) or (len(nums) == 3 and nums[2] < 1):
                raise ValueError(f"k grid {part!r}: expected 'first:last[:step]', step >= 1.")
            out.extend(range(nums[0], nums[1] + 1, nums[2] if len(nums) == 3 else 1))
            continue
        try:
            out.append(int(part))
        except ValueError:
            raise ValueError(
                f"k grid {part!r}: give an int, 'first:last[:step]' or '5,10,20'.") from None
    grid = sorted(set(out))
    if not grid:
        raise ValueError(f"k grid {text!r} is empty.")
    if grid[0] < 1:
        raise ValueError(f"k grid {text!r}: every number of features must be >= 1.")
    return tuple(grid)


def k_grid_type(text: str) -> str:
    """argparse type of ``compare --k``: the text, once :func:`parse_k_grid` accepts it."""
    try:
        parse_k_grid(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def parse_cv(text: str) -> str:
    """``compare --cv``: a number of folds >= 2, ``split`` or ``none`` (returned as text)."""
    value = text.strip().lower()
    if value in ("split", "none"):
        return value
    folds = convert(int, value, f"{text!r}: give a number of folds (>= 2), 'split' or 'none'")
    if folds < 2:
        raise argparse.ArgumentTypeError(
            f"{text}: cross-validation needs at least 2 folds (or 'split', 'none')")
    return str(folds)


# ------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataRef:
    """Where a DATA argument points.

    Attributes
    ----------
    argument : str
        As given.
    kind : {"default", "file", "benchmark", "generator"}
    resolved : str
        What ``sparsefs.harness.DataSpec.from_string`` reads (a path, a benchmark name,
        ``default`` or a generator name).
    path : Path or None
        The file read (a data file, or a benchmark set's local copy).
    """

    argument: str
    kind: str
    resolved: str
    path: Path | None = None

    @property
    def extension(self) -> str:
        """The data file's format (``.csv``, ``.mat`` ...); ``""`` when not a file."""
        return data_extension(self.path) if self.kind == "file" and self.path else ""

    @property
    def has_labels_inside(self) -> bool:
        """Whether labels come without ``--target`` (.mat/.npz files, benchmarks, generators,
        the default)."""
        return self.kind != "file" or self.extension in LABELLED_EXTENSIONS


def data_extension(path: Path) -> str:
    """The supported ending of ``path`` (compound ones such as ``.csv.gz`` included), or
    ``""``."""
    lower = path.name.lower()
    for ext in sorted(DATA_EXTENSIONS, key=len, reverse=True):
        if lower.endswith(ext) and len(lower) > len(ext):
            return ext
    return ""


def shared_data_dir() -> Path | None:
    """``$SPARSEFS_DATA`` (a directory), else ``../shared/data`` beside a source checkout: the
    same rule as ``sparsefs.datasets._asu.shared_data_dir`` (a test compares them)."""
    env = os.environ.get("SPARSEFS_DATA")
    if env:
        path = Path(env).expanduser()
        return path.resolve() if path.is_dir() else None
    candidate = (Path(__file__).resolve().parents[2] / ".." / "shared" / "data").resolve()
    return candidate if candidate.is_dir() else None


def benchmark_dirs() -> list[Path]:
    """Where ``fetch_asu(download=False)`` looks: ``$SPARSEFS_DATA``, then the download cache
    (``$XDG_CACHE_HOME/sparsefs`` or ``~/.cache/sparsefs``)."""
    dirs = []
    env = os.environ.get("SPARSEFS_DATA")
    if env:
        dirs.append(Path(env).expanduser())
    xdg = os.environ.get("XDG_CACHE_HOME")
    dirs.append((Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "sparsefs")
    return dirs


def locate_data(text: str, *, flag: str = "DATA") -> DataRef:
    """Resolve a DATA argument as ``select``, ``compare`` and ``export`` do, in this order:
    ``default``; an existing file; a benchmark name, with or without ``.mat`` (its local copy
    in ``SPARSEFS_DATA`` or the download cache); a file of that name inside ``SPARSEFS_DATA``;
    a ``make_*`` generator.

    Raises
    ------
    CLIError
        For a folder, an unsupported format, a benchmark set that is not available locally, or
        anything else not found.
    """
    if text == DEFAULT_DATA:
        return DataRef(text, "default", DEFAULT_DATA)
    path = Path(text).expanduser()
    if path.exists():
        return _file_ref(text, path, flag)
    name = benchmark_name(text)
    if name is not None:
        for d in benchmark_dirs():
            local = d / f"{name}.mat"
            if local.is_file():
                return DataRef(text, "benchmark", name, local)
        raise CLIError(
            f"data set {name!r} is not available locally: set SPARSEFS_DATA to a directory "
            f"holding {name}.mat, or fetch it once with "
            f"python -c \"from sparsefs.datasets import fetch_asu; fetch_asu('{name}')\"")
    home = shared_data_dir()
    if home is not None and (home / text).is_file():
        return _file_ref(text, home / text, flag)
    if text.startswith("make_") and os.sep not in text:
        return DataRef(text, "generator", text)
    hint = f" (also looked in SPARSEFS_DATA = {home})" if home is not None else ""
    raise CLIError(
        f"no such data file: {text!r}{hint}; give a data file, a benchmark name such as "
        "ALLAML, 'default' or a make_* generator")


def resolve_data(text: str) -> str:
    """Turn a DATA argument into what :meth:`DataSpec.from_string` reads, the same way for
    ``select``, ``compare`` and ``export`` (:func:`locate_data`, no heavy import). Anything not
    found is returned unchanged (and reported as missing when loaded); a benchmark name as its
    canonical name even without a local copy."""
    try:
        return locate_data(text).resolved
    except CLIError:
        name = benchmark_name(text)
        return text if name is None else name


def benchmark_name(text: str) -> str | None:
    """The canonical ASU name of ``text`` (case-insensitive, ``-`` as ``_``, with or without
    ``.mat``), or None."""
    key = text.strip().lower().replace("-", "_")
    key = key[:-4] if key.endswith(".mat") else key
    return ASU_NAMES.get(key)


def _file_ref(text: str, path: Path, flag: str) -> DataRef:
    if path.is_dir():
        raise CLIError(f"{flag} {text}: is a directory; give a data file")
    if not data_extension(path):
        raise CLIError(
            f"{flag} {text}: unsupported file type; expected one of "
            f"{', '.join(DATA_EXTENSIONS)}")
    if not os.access(path, os.R_OK):
        raise CLIError(f"{flag} {text}: the file is not readable")
    return DataRef(text, "file", str(path), path)


# ------------------------------------------------------------------------------------------
# outputs
# ------------------------------------------------------------------------------------------


def meta_path(out: Path) -> Path:
    """Where ``select`` records a run's settings: the table's name plus ``.meta.json``
    (``genes.csv`` -> ``genes.csv.meta.json``), so tables that differ in their extension
    (``genes.csv``, ``genes.json``) never share one."""
    return out.with_name(out.name + META_SUFFIX)


def probe_writable(folder: Path) -> str | None:
    """Create and remove a file in ``folder``: the only reliable test (``os.access`` says yes
    to root everywhere, and to ``/proc``). Returns the reason it failed, or None."""
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".sparsefs-probe-")
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(name)
    return None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


@dataclass
class OutputPlan:
    """The files (and folders) a command will write, checked together before any work.

    Parameters
    ----------
    inputs : list of Path
        Files the command reads: an output that is the same file as one of them is refused
        whatever ``force`` says.
    force : bool
        Whether existing outputs may be replaced.
    """

    inputs: list[Path] = field(default_factory=list)
    force: bool = False
    outputs: list[tuple[str, Path]] = field(default_factory=list)

    def add_file(self, flag: str, path: Path) -> None:
        """A file written by replacing ``path`` (atomically), checked now."""
        if path.is_dir():
            raise CLIError(f"{flag} {path}: is a directory; give a file name")
        self._check_folder(flag, path, path.parent)
        self._check_not_input(flag, path)
        for other_flag, other in self.outputs:
            if _same_path(path, other):
                raise CLIError(f"{flag} {path} and {other_flag} {other} name the same file; "
                               "give distinct names")
        if path.exists() and not self.force:
            raise CLIError(f"{path} exists; pass --force to overwrite it")
        self.outputs.append((flag, path))

    def add_folder(self, flag: str, folder: Path, names: Iterable[str],
                   patterns: Iterable[str] = ()) -> None:
        """A folder (created if needed) into which files ``names`` (and files matching
        ``patterns``, such as ``*.png``) are written."""
        if folder.exists() and not folder.is_dir():
            raise CLIError(f"{flag} {folder}: exists and is not a directory")
        ancestor = folder.absolute()
        while not ancestor.exists():
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise CLIError(f"{flag} {folder}: {ancestor} is not a directory")
        reason = probe_writable(ancestor)
        if reason is not None:
            raise CLIError(f"{flag} {folder}: cannot write in {ancestor} ({reason})")
        if not folder.is_dir():
            return
        targets = [folder / n for n in names]
        for pattern in patterns:
            targets += sorted(folder.glob(pattern))
        for target in targets:
            self._check_not_input(flag, target, inside=folder)
        clash = [t for t in targets if t.exists() and t.name in set(names)]
        if clash and not self.force:
            raise CLIError(f"{clash[0]} exists; pass --force to overwrite it")

    def _check_folder(self, flag: str, path: Path, folder: Path) -> None:
        if not folder.exists():
            raise CLIError(f"{flag} {path}: directory {folder} does not exist")
        if not folder.is_dir():
            raise CLIError(f"{flag} {path}: {folder} is not a directory")
        reason = probe_writable(folder)
        if reason is not None:
            raise CLIError(f"{flag} {path}: cannot write in {folder} ({reason})")

    def _check_not_input(self, flag: str, path: Path, inside: Path | None = None) -> None:
        for source in self.inputs:
            if _same_file(path, source):
                where = f" (in {inside})" if inside is not None else ""
                raise CLIError(
                    f"{flag} {path}{where} is the input file {source}; name a new file: the "
                    "input is never overwritten, with or without --force")


def _same_path(a: Path, b: Path) -> bool:
    """Whether two (possibly not yet existing) paths name one file."""
    if a.exists() and b.exists():
        return _same_file(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


# ------------------------------------------------------------------------------------------
# estimator parameters, read from the source without importing it
# ------------------------------------------------------------------------------------------

_PARAMLESS_BASES = ("BaseEstimator",)


@cache
def _module_tree(module: str) -> tuple[ast.Module, Path] | None:
    import sparsefs

    root = Path(sparsefs.__file__).resolve().parent.parent
    parts = module.split(".")
    if parts[0] != "sparsefs":
        return None
    base = root.joinpath(*parts)
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    try:
        return ast.parse(path.read_text(encoding="utf-8")), path
    except (OSError, SyntaxError, ValueError):
        return None


def _resolve_import(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    keep = parts if is_package else parts[:-1]
    keep = keep[: len(keep) - (node.level - 1)]
    return ".".join([*keep, *([node.module] if node.module else [])])


def _find_class(module: str, name: str, depth: int = 0) -> tuple[str, ast.ClassDef] | None:
    """The module and class definition of ``module.name``, following ``from x import name``."""
    if depth > 8:
        return None
    found = _module_tree(module)
    if found is None:
        return None
    tree, path = found
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return module, node
    is_package = path.name == "__init__.py"
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _find_class(_resolve_import(module, is_package, node), alias.name,
                                       depth + 1)
    return None


def _init_params(module: str, cls: ast.ClassDef, depth: int = 0) -> tuple[str, ...] | None:
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            a = node.args
            if a.vararg is not None or a.kwarg is not None:
                return None  # scikit-learn refuses these; the heavy check decides
            names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
            return tuple(n for n in names[1:] if n != "self") if names else ()
    for base in cls.bases:
        name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
        if name is None:
            return None
        if name.endswith("Mixin") or name in _PARAMLESS_BASES:
            continue
        found = _find_class(module, name, depth + 1)
        if found is None:
            return None
        params = _init_params(*found, depth=depth + 1)
        if params is None:
            return None
        return params
    return ()


def estimator_param_names(info: MethodInfo) -> tuple[str, ...] | None:
    """The parameters of a registered estimator (its ``__init__``, as scikit-learn's
    ``get_params`` reads them), from the source with :mod:`ast`: no import. None when the
    source cannot say (the check then runs after importing the estimator)."""
    module, _, name = info.import_path.partition(":")
    found = _find_class(module, name)
    if found is None:
        return None
    names = _init_params(*found)
    return None if names is None else tuple(sorted(names))


def check_params(info: MethodInfo, params: dict[str, Any]) -> None:
    """Unknown ``-p`` keys, reported from the source (no import)."""
    accepted = estimator_param_names(info)
    if accepted is None:
        return
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise CLIError(
            f"{info.name} has no parameter {', '.join(unknown)}; it takes {', '.join(accepted)}.")


# ------------------------------------------------------------------------------------------
# select
# ------------------------------------------------------------------------------------------


@dataclass
class SelectPlan:
    """What ``select`` will do, once every light check passed."""

    args: argparse.Namespace
    method: MethodInfo
    params: dict[str, Any]
    data: DataRef
    outputs: OutputPlan
    out: Path
    meta: Path
    h5ad_out: Path | None = None

    @property
    def uses_labels(self) -> bool:
        """Whether the fit takes y: a supervised method, or a rule that permutes labels."""
        return self.method.supervision == "supervised" or error_rule(self.args) is not None


#: The cross-flag checks of ``select``, run in order by :func:`plan_select` after the method,
#: its parameters and the data are known. Add one with :func:`select_check`.
SELECT_CHECKS: list[Callable[[SelectPlan], None]] = []


def select_check(func: Callable[[SelectPlan], None]) -> Callable[[SelectPlan], None]:
    """Register ``func(plan)`` as a check of ``select`` (it raises CLIError to refuse)."""
    SELECT_CHECKS.append(func)
    return func


def error_rule(args: argparse.Namespace) -> tuple[str, float] | None:
    """``(procedure, level)`` of ``--fdr`` / ``--fwer``, or None; the flag combinations are
    checked by :func:`_check_error_control`."""
    fdr, fwer = getattr(args, "fdr", None), getattr(args, "fwer", None)
    correction = getattr(args, "correction", None)
    if fdr is not None:
        return correction or "bh", fdr
    if fwer is not None:
        return correction or "holm", fwer
    return None


#: The methods that take ``groups`` (donor labels) in ``fit``: the trust layer.
GROUPS_METHODS = ("error_control", "stability")


@select_check
def _check_outcome(plan: SelectPlan) -> None:
    """--time/--event (a survival outcome), --continuous and --groups (issues #30, #32)."""
    args = plan.args
    time_col, event_col = getattr(args, "time", None), getattr(args, "event", None)
    if (time_col is None) != (event_col is None):
        raise CLIError("--time and --event: a survival outcome needs both columns")
    if time_col is not None and args.target is not None:
        raise CLIError("--target with --time/--event: give the label or outcome column, or the "
                       "two survival columns, not both")
    if getattr(args, "continuous", False):
        if time_col is not None:
            raise CLIError("--continuous reads --target as numbers; a survival outcome "
                           "(--time/--event) goes without it")
        if args.target is None:
            raise CLIError("--continuous reads --target as a continuous outcome: name the "
                           "column with --target")
    groups = getattr(args, "groups", None)
    if groups is not None and plan.data.kind == "file" and not (
            plan.method.stem in GROUPS_METHODS or getattr(args, "stability", None) is not None
            or error_rule(args) is not None):
        raise CLIError(
            f"--groups {groups}: {plan.method.name} does not use groups; they make p-values, "
            "q-values and stability frequencies donor-level: add --fdr/--fwer or --stability, "
            "or use -m error_control / -m stability")


@select_check
def _check_labels(plan: SelectPlan) -> None:
    args, data = plan.args, plan.data
    time_col, groups = getattr(args, "time", None), getattr(args, "groups", None)
    if data.kind != "file" and (args.target or args.transpose or time_col or groups):
        raise CLIError(f"{args.data}: --target, --time/--event, --transpose and --groups apply "
                       "to data files only")
    if data.extension == ".h5ad" and args.transpose:
        raise CLIError(f"{args.data}: --transpose does not apply to .h5ad files (AnnData is "
                       "already samples x features)")
    if plan.uses_labels and not data.has_labels_inside and not args.target and not time_col:
        why = (f"{plan.method.name} is supervised" if plan.method.supervision == "supervised"
               else "--fdr/--fwer permute the labels")
        raise CLIError(f"{why}: name the label column of {args.data} with --target (or the "
                       "survival columns with --time and --event)")


@select_check
def _check_k(plan: SelectPlan) -> None:
    if plan.args.k is not None and "n_features_to_select" in plan.params:
        raise CLIError("-k and -p n_features_to_select say the same thing; give one")


@select_check
def _check_stability(plan: SelectPlan) -> None:
    args = plan.args
    if getattr(args, "stability", None) is None:
        for flag in ("pfer", "stability_plot"):
            if getattr(args, flag, None) is not None:
                raise CLIError(f"--{flag.replace('_', '-')} needs --stability")
        return
    if plan.method.stem == "stability":
        raise CLIError("--stability wraps a method; -m stability is one already")
    plot = getattr(args, "stability_plot", None)
    if plot is not None:
        path = Path(plot)
        if path.suffix.lower() not in PLOT_EXTENSIONS:
            raise CLIError(f"--stability-plot {plot}: the extension must be .png, .pdf or .svg")
        plan.outputs.add_file("--stability-plot", path)


def error_flags_refusal(args: argparse.Namespace) -> str | None:
    """Why the ``--fdr`` / ``--fwer`` / ``--correction`` / ``--permutations`` flags do not go
    together, or None (also checked by ``sparsefs.cli._error_control`` when it wraps)."""
    fdr, fwer = getattr(args, "fdr", None), getattr(args, "fwer", None)
    correction = getattr(args, "correction", None)
    if fdr is not None and fwer is not None:
        return "--fdr and --fwer are two different guarantees; give one"
    if fdr is None and fwer is None:
        for flag in ("correction", "permutations"):
            if getattr(args, flag, None) is not None:
                return f"--{flag} needs --fdr or --fwer"
    elif fdr is not None and correction not in (None, "bh", "by"):
        return f"--correction {correction} controls the FWER; use it with --fwer"
    elif fwer is not None and correction not in (None, "holm", "bonferroni", "maxt"):
        return f"--correction {correction} controls the FDR; use it with --fdr"
    return None


@select_check
def _check_error_control(plan: SelectPlan) -> None:
    args = plan.args
    refusal = error_flags_refusal(args)
    if refusal is not None:
        raise CLIError(refusal)
    fdr, fwer = getattr(args, "fdr", None), getattr(args, "fwer", None)
    if fdr is None and fwer is None:
        return
    correction = getattr(args, "correction", None)
    flag, level = ("--fdr", fdr) if fdr is not None else ("--fwer", fwer)
    if getattr(args, "stability", None) is not None:
        raise CLIError(f"{flag} and --stability are two selection rules; give one")
    if args.k is not None:
        k = args.k if isinstance(args.k, int) else f"{args.k:g}"
        raise CLIError(
            f"-k {k} and {flag} {level:g} are two rules for how many features to keep: {flag} "
            f"keeps every feature that passes, however many; drop -k (or drop {flag} to keep "
            f"the top {k})")
    stem = plan.method.stem
    if stem == "knockoffs" and (fwer is not None or correction is not None):
        raise CLIError("-m knockoffs controls the FDR only: use --fdr Q")
    if plan.method.supervision == "unsupervised":
        raise CLIError(
            f"{flag} computes p-values by permuting the labels, and {plan.method.name} is "
            "unsupervised: its scores ignore the labels, so every p-value would be 1. Use a "
            "supervised method (-m fisher_score: the F test)")


def plan_select(args: argparse.Namespace) -> SelectPlan:
    """Every check of ``select`` that needs no import beyond the registry, in the order a user
    reads the command: outputs, method and parameters, data, flag combinations.

    Raises
    ------
    CLIError
    """
    out = Path(args.out)
    if out.suffix.lower() not in TABLE_EXTENSIONS or out.name.lower().endswith(META_SUFFIX):
        if out.is_dir():
            raise CLIError(f"--out {out}: is a directory; give a file name ending in .csv, "
                           ".tsv or .json")
        if out.name.lower().endswith(META_SUFFIX):
            raise CLIError(f"--out {out}: names ending in {META_SUFFIX} are kept for the "
                           "settings file written beside the table; choose another name")
        raise CLIError(f"--out {out}: the extension must be .csv, .tsv or .json")
    try:
        data, data_error = locate_data(args.data), None
    except CLIError as exc:  # reported after the outputs, which never need the data
        data, data_error = DataRef(args.data, "missing", args.data), exc
    inputs = [data.path] if data.path is not None else []
    outputs = OutputPlan(inputs=inputs, force=args.force)
    outputs.add_file("--out", out)
    meta = meta_path(out)
    outputs.add_file("--out (its settings file)", meta)
    try:
        method = get_method(args.method)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    params = dict(args.param)
    check_params(method, params)
    if data_error is not None:
        raise data_error
    plan = SelectPlan(args, method, params, data, outputs, out, meta)
    if getattr(args, "write_h5ad", None):
        if data.extension != ".h5ad":
            raise CLIError(f"--write-h5ad needs a .h5ad DATA file; got {args.data!r}")
        target = Path(args.write_h5ad)
        if target.suffix.lower() != ".h5ad":
            raise CLIError(f"--write-h5ad {target}: the output must end in .h5ad")
        outputs.add_file("--write-h5ad", target)
        plan.h5ad_out = target
    for check in SELECT_CHECKS:
        check(plan)
    return plan


def plan_export(args: argparse.Namespace) -> tuple[DataRef, Path]:
    """The checks of ``export``: the data, and an output that is new (or ``--force``d), in a
    writable folder, of a table format, and never the input."""
    out = Path(args.out)
    ext = data_extension(out)
    if out.is_dir():
        raise CLIError(f"--out {out}: is a directory; give a file name")
    if ext not in (".csv", ".tsv", ".parquet") and not ext.startswith((".csv.", ".tsv.")):
        raise CLIError(f"--out {out}: the extension must be .csv, .tsv or .parquet (.csv.gz "
                       "and .tsv.gz compress)")
    data = locate_data(args.data)
    if data.kind != "file" and (args.target or args.transpose):
        raise CLIError(f"{args.data}: --target and --transpose apply to data files only")
    plan = OutputPlan(inputs=[data.path] if data.path is not None else [], force=args.force)
    plan.add_file("--out", out)
    return data, out


