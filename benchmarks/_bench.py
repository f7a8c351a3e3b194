"""Tiny shared runner for the sparsefs benchmark scripts (not shipped with the package).

Dependencies: numpy, the standard library and sparsefs (its load monitor,
``sparsefs.utils._load``). ``threadpoolctl`` is used for BLAS information when it is
importable; nothing else is optional.

Convention (see ``benchmarks/README.md``):

* every peer is timed in the same run as sparsefs, on the same data;
* each figure is the median of ``repeat`` timed calls after ``warmup`` untimed calls,
  with per-call data preparation (``setup``) outside the timing;
* machine load is recorded for every timing and for the whole run (``fl``, the share of
  the machine used by *other* processes; runs with ``fl > 0.05`` are flagged);
* a script prints a human-readable table and, as its LAST stdout line, one
  ``BENCH_JSON {...}`` line holding every figure and ratio;
* ``--quick`` runs smaller sizes / fewer repeats as a smoke test.

Typical use::

    from _bench import BenchRun, bench_parser, emit_json, print_table, time_call

    args = bench_parser("what this measures").parse_args()
    run = BenchRun("name", args)
    t = time_call(lambda X: f(X, y), setup=lambda: X.copy(), repeat=args.repeat)
    print_table([{"method": "f", "median_s": t.median}], ["method", "median_s"])
    emit_json(run.finish({"results": [t.to_dict()]}), out=args.out)
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# machine load: the package's one monitor (fl, its flag limit and the coarse-window rule are
# documented in sparsefs/utils/_load.py; standard library only, no scikit-learn loaded)
from sparsefs.utils._load import FL_LIMIT, FL_MIN_TICKS, LoadMonitor, fl_flag  # noqa: F401

REPO_ROOT = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- timing


@dataclass
class Timing:
    """All timings of one ``time_call``; summary statistics in seconds."""

    name: str
    times: list[float]
    warmup_times: list[float]
    load: dict[str, Any]
    result: Any = field(default=None, repr=False)  # return value of the last timed call

    @property
    def median(self) -> float:
        return float(np.median(self.times))

    @property
    def min(self) -> float:
        return float(np.min(self.times))

    @property
    def max(self) -> float:
        return float(np.max(self.times))

    @property
    def iqr(self) -> float:
        q1, q3 = np.percentile(self.times, [25, 75])
        return float(q3 - q1)

    @property
    def fl(self) -> float | None:
        return self.load.get("fl")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "median_s": self.median,
            "min_s": self.min,
            "max_s": self.max,
            "iqr_s": self.iqr,
            "repeat": len(self.times),
            "warmup": len(self.warmup_times),
            "times_s": self.times,
            "warmup_times_s": self.warmup_times,
            "fl": self.fl,
            "fl_coarse": self.load.get("fl_coarse"),
            "own_cpu_s": self.load.get("own_cpu_s"),
            "load_flag": fl_flag(self.fl, self.load.get("fl_coarse", True)),
        }


def _one_call(fn: Callable, setup: Callable | None) -> tuple[float, Any]:
    arg = setup() if setup is not None else None
    gc.collect()
    gc.disable()  # like timeit: no cyclic-GC pauses inside the timed call
    try:
        t0 = time.perf_counter()
        res = fn(arg) if setup is not None else fn()
        dt = time.perf_counter() - t0
    finally:
        gc.enable()
    return dt, res


def time_call(
    fn: Callable,
    *,
    repeat: int = 5,
    warmup: int = 1,
    setup: Callable[[], Any] | None = None,
    name: str = "",
) -> Timing:
    """Time ``fn``: ``warmup`` untimed calls, then ``repeat`` timed calls.

    If ``setup`` is given it is called before *every* call (warm-up and timed), outside
    the timing, and its return value is passed as the single argument of ``fn``
    (``setup=lambda: X.copy()`` gives each call a fresh copy of X). Without ``setup``,
    ``fn()`` is called with no argument. Wall time by ``time.perf_counter``; cyclic GC
    is collected before and disabled during each timed call. The machine load (fl) is
    measured over the timed calls (setup included: it is this process's own CPU time).
    """
    if repeat < 1:
        raise ValueError("repeat must be >= 1")
    warm = [_one_call(fn, setup)[0] for _ in range(warmup)]
    mon = LoadMonitor().start()
    times, res = [], None
    for _ in range(repeat):
        dt, res = _one_call(fn, setup)
        times.append(dt)
    load = mon.stop()
    return Timing(name=name, times=times, warmup_times=warm, load=load, result=res)


# --------------------------------------------------------------------------- memory


def _read_status_kib(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def peak_rss_mib() -> dict[str, float]:
    """Lifetime peak resident set size (high-water mark) so far, in MiB.

    ``self``: this process (``getrusage(RUSAGE_SELF).ru_maxrss``); ``children``: the
    largest peak among reaped child processes (``RUSAGE_CHILDREN``; a maximum, not a
    sum). Both are monotone over the process lifetime, so they bound, not isolate, the
    memory of any one call; see ``call_peak_memory`` for that.
    """
    scale = 1.0 / 1024**2 if sys.platform == "darwin" else 1.0 / 1024  # bytes vs KiB
    return {
        "self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale,
        "children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale,
    }


def _reset_hwm() -> bool:
    """Reset this process's peak RSS (VmHWM) via /proc/self/clear_refs (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def call_peak_memory(fn: Callable, *, setup: Callable[[], Any] | None = None) -> dict[str, Any]:
    """Extra peak memory of ONE call of ``fn`` (same ``setup`` convention as ``time_call``).

    Untimed (tracing slows pure-Python code); run it apart from ``time_call``. Both
    measures are taken on the same call, after ``setup``:

    * ``traced_mib``: peak of the allocations traced by Python's ``tracemalloc`` during
      the call, above what was allocated before it. numpy (and so scipy.sparse) arrays are
      traced, so this is the call's peak of temporaries + outputs; buffers that C
      libraries allocate themselves (OpenBLAS work buffers, numba, C++ extensions) are
      not. This is the primary figure.
    * ``rss_mib`` (Linux only, else None): peak RSS during the call minus RSS just before
      it; the peak is reset through ``/proc/self/clear_refs``. Counts everything at page
      granularity, but memory that the allocator kept from earlier calls is reused without
      growing RSS, so it can under-report (often 0 for repeated same-size calls).
    """
    arg = setup() if setup is not None else None
    gc.collect()
    before = _read_status_kib("VmRSS")
    hwm = before is not None and _reset_hwm()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        _ = fn(arg) if setup is not None else fn()
        traced_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    peak = _read_status_kib("VmHWM") if hwm else None
    return {
        "traced_mib": max(0, traced_peak - base) / 1024**2,
        "rss_mib": None if peak is None else max(0, peak - before) / 1024,
    }


# --------------------------------------------------------------------------- machine info


def _version(mod: str) -> str | None:
    try:
        m = __import__(mod)
    except Exception:  # any import failure means "not available"
        return None
    return getattr(m, "__version__", "unknown")


def _git(*cmd: str) -> str | None:
    try:
        r = subprocess.run(["git", *cmd], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _blas_info() -> list[dict[str, Any]] | None:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    keys = (
        "user_api",
        "internal_api",
        "prefix",
        "version",
        "num_threads",
        "architecture",
        "threading_layer",
    )
    return [{k: d.get(k) for k in keys if k in d} for d in threadpool_info()]


def loadavg() -> list[float] | None:
    """``os.getloadavg()`` (1, 5, 15 min), or None where unavailable."""
    try:
        return [round(x, 3) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def machine_info() -> dict[str, Any]:
    """Software versions, git revision, CPUs, BLAS, OpenBLAS env and current load average.

    ``OPENBLAS_CORETYPE`` / ``OPENBLAS_L2_SIZE`` are only read, never changed.
    """
    status = _git("status", "--porcelain", "--untracked-files=no")
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = None
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "numpy": _version("numpy"),
        "scipy": _version("scipy"),
        "sklearn": _version("sklearn"),
        "sparsefs": _version("sparsefs"),
        "git_rev": _git("rev-parse", "--short", "HEAD"),
        "git_dirty": None if status is None else bool(status),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": affinity,
        "blas": _blas_info(),
        "env": {
            k: os.environ.get(k)
            for k in (
                "OPENBLAS_CORETYPE",
                "OPENBLAS_L2_SIZE",
                "OPENBLAS_NUM_THREADS",
                "OMP_NUM_THREADS",
                "MKL_NUM_THREADS",
            )
        },
        "loadavg": loadavg(),
    }


# --------------------------------------------------------------------------- run / CLI


def bench_parser(description: str, *, default_repeat: int = 5) -> argparse.ArgumentParser:
    """Parser with the common options: --quick, --repeat N, --warmup N, --out FILE.

    ``--repeat`` defaults to None so that a script can pick a smaller default under
    ``--quick``; use ``repeat_for(args)``.
    """
    p = argparse.ArgumentParser(description=description)
    p.add_argument(
        "--quick", action="store_true", help="smoke run: smaller sizes and fewer repeats"
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=None,
        metavar="N",
        help=f"timed calls per figure (default {default_repeat}; 3 with --quick)",
    )
    p.add_argument(
        "--warmup",
        type=int,
        default=1,
        metavar="N",
        help="untimed warm-up calls before timing (default 1)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the final JSON payload to FILE",
    )
    p.set_defaults(_default_repeat=default_repeat)
    return p


def repeat_for(args: argparse.Namespace) -> int:
    if args.repeat is not None:
        return args.repeat
    return 3 if args.quick else args._default_repeat


class BenchRun:
    """Records machine info and load before the benchmark; ``finish`` adds load after."""

    def __init__(self, name: str, args: argparse.Namespace | None = None) -> None:
        self.name = name
        self.args = args
        self.machine = machine_info()
        self.loadavg_before = self.machine.pop("loadavg")
        self._mon = LoadMonitor().start()

    def finish(self, payload: dict[str, Any]) -> dict[str, Any]:
        load = self._mon.stop()
        load.update(
            loadavg_before=self.loadavg_before,
            loadavg_after=loadavg(),
            fl_limit=FL_LIMIT,
            load_flag=fl_flag(load["fl"], load["fl_coarse"]),
        )
        a = self.args
        head = {
            "benchmark": self.name,
            "schema": 1,
            "quick": bool(getattr(a, "quick", False)),
            "repeat": repeat_for(a) if a is not None else None,
            "warmup": getattr(a, "warmup", None),
            "machine": self.machine,
            "load": load,
            "peak_rss_mib": peak_rss_mib(),
        }
        return {**head, **payload}


# --------------------------------------------------------------------------- output


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool | np.bool_):
        return "yes" if v else "NO"
    if isinstance(v, float | np.floating):
        if not math.isfinite(v):
            return str(v)
        a = abs(v)
        if a == 0:
            return "0"
        if a >= 1000 or a < 1e-3:
            return f"{v:.3g}"
        return f"{v:.4g}"
    return str(v)


def print_table(
    rows: Sequence[dict[str, Any]],
    columns: Sequence[str | tuple[str, str]],
    *,
    title: str | None = None,
    file=None,
) -> None:
    """Print ``rows`` (dicts) as a plain-text aligned table.

    ``columns`` are keys, or ``(key, header)`` pairs. Numbers are right-aligned, text
    left-aligned; floats get 4 significant digits, None prints as ``-``.
    """
    file = file or sys.stdout
    cols = [(c, c) if isinstance(c, str) else c for c in columns]
    cells = [[_fmt(r.get(k)) for k, _ in cols] for r in rows]
    numeric = [
        all(isinstance(r.get(k), int | float | np.number) or r.get(k) is None for r in rows)
        and not all(isinstance(r.get(k), bool) for r in rows)
        for k, _ in cols
    ]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, (_, h) in enumerate(cols)]

    def line(vals: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(vals, widths, numeric)
        ).rstrip()

    if title:
        print(title, file=file)
    print(line([h for _, h in cols]), file=file)
    print("  ".join("-" * w for w in widths), file=file)
    for row in cells:
        print(line(row), file=file)
    file.flush()


def _jsonable(o: Any) -> Any:
    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [_jsonable(v) for v in o]
    if isinstance(o, np.ndarray):
        return _jsonable(o.tolist())
    if isinstance(o, np.bool_ | bool):
        return bool(o)
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, float | np.floating):
        f = float(o)
        return f if math.isfinite(f) else None  # strict JSON has no NaN/inf
    if isinstance(o, Path):
        return str(o)
    return o


def emit_json(payload: dict[str, Any], *, out: Path | str | None = None) -> str:
    """Print ``BENCH_JSON <compact json>`` as one line (make it the script's LAST line).

    Non-finite floats become null and numpy scalars/arrays plain JSON. With ``out``, the
    same JSON (without the prefix) is also written to that file. Returns the JSON text.
    """
    text = json.dumps(_jsonable(payload), separators=(",", ":"), allow_nan=False)
    if out is not None:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
    sys.stdout.flush()
    print("BENCH_JSON " + text, flush=True)
    return text
