"""How fast the command line refuses (issue #31 row 5: every refusal <= 0.5 s).

Each refusal of ``sparsefs/cli/tests/test_issue31.py::_refusals`` (bad flag values, missing
data, unknown methods and parameters, flag combinations, outputs that are folders, missing,
unwritable or the input itself, ...) runs as ``python -m sparsefs ...`` in a fresh process,
``--repeat`` times; the median wall time is printed beside ``python -c pass`` and
``python -c "import numpy"`` timed in the same run, with the machine's load (the figures
depend on it: run on a quiet machine for the acceptance number).

    python benchmarks/bench_cli_refusals.py [--repeat 5]
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import BenchRun, bench_parser, emit_json, print_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sparsefs.cli.tests.test_issue31 import _refusals

TARGET_S = 0.5


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(cmd: list[str], repeat: int, cwd: str) -> tuple[float, float, int]:
    """Median wall and CPU seconds (the child's user + system time: what a quiet machine's
    wall time would be for a one-thread refusal) and the exit status."""
    times, cpus, code = [], [], 0
    for _ in range(repeat):
        start, cpu = time.perf_counter(), _children_cpu()
        code = subprocess.run(cmd, capture_output=True, cwd=cwd).returncode
        times.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - cpu)
    return statistics.median(times), statistics.median(cpus), code


def main() -> int:
    args = bench_parser(__doc__.splitlines()[0], default_repeat=5).parse_args()
    run = BenchRun("cli_refusals", args)
    repeat = 3 if args.quick else args.repeat
    py = sys.executable
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, cmd in (("python -c pass", [py, "-c", "pass"]),
                          ("python -c 'import numpy'", [py, "-c", "import numpy"])):
            t, c, _ = _time(cmd, repeat, tmp)
            rows.append({"case": name, "median_s": t, "cpu_s": c, "exit": 0, "target": ""})
        for argv, message in _refusals(Path(tmp)):
            t, c, code = _time([py, "-m", "sparsefs", *argv], repeat, tmp)
            label = " ".join(a if len(a) < 30 else "…" + Path(a).name for a in argv)
            rows.append({"case": f"{label}  ({message})", "median_s": t, "cpu_s": c,
                         "exit": code, "target": "ok" if t <= TARGET_S else "OVER"})
    print_table(rows, ["case", ("median_s", "wall s"), ("cpu_s", "CPU s"), "exit",
                       ("target", "wall <= 0.5 s")])
    over = [r for r in rows if r["target"] == "OVER"]
    emit_json(run.finish({"refusals": rows, "target_s": TARGET_S, "n_over": len(over)}),
              out=args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
