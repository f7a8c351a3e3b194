"""The README's "From the shell" block, run as written in an empty folder after installing the
wheel (issue #31 row 2).

The wheel is built from this checkout (``pip wheel --no-deps --no-build-isolation``: hatchling
comes with the test extra) and installed without dependencies into a fresh virtual environment
whose ``site-packages`` is followed by the test interpreter's (numpy, scikit-learn, ... are
reused, not downloaded): the installed ``sparsefs`` script, the configs shipped in the wheel
and nothing of the checkout. Each line runs in order in an empty temporary folder with the
installed script first on ``PATH`` and no ``PYTHONPATH``; the first failure fails the test.
Lines that name a benchmark set need it in ``SPARSEFS_DATA`` and are skipped (with the reason
reported) when it is absent.

Independent checks: the README text itself (the commands are extracted, not copied), the exit
status of each line, the files each line writes, and the import location of the installed
package (the fresh environment, never the checkout).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

#: what each README line must leave in the folder (a file or folder name)
EXPECTED = {
    "select ALLAML.mat": ["genes.csv", "genes.csv.meta.json"],
    "export default": ["expr.csv"],
    "select expr.csv": ["genes.json", "genes.json.meta.json"],
    "compare default": ["cmp-default/report.md", "cmp-default/results.csv"],
    "compare expr.csv": ["cmp-expr/report.md", "cmp-expr/results.csv"],
    "reproduce fisher_score": ["repro/fisher_score.md"],
}


def readme_shell_block() -> list[str]:
    """The command lines of the README's first code block under "From the shell"."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## From the shell", 1)[1]
    block = section.split("```", 2)[1]
    lines = []
    for line in block.splitlines():
        line = line.split("#", 1)[0].strip()  # comments
        if line:
            lines.append(line)
    return lines


def test_readme_shell_block_is_what_this_test_knows():
    """The block's lines are all sparsefs commands, each output file name distinct."""
    lines = readme_shell_block()
    assert lines and all(line.startswith("sparsefs ") for line in lines)
    outs = [m.group(1) for line in lines for m in [re.search(r"--out (\S+)", line)] if m]
    assert len(outs) == len(set(outs)), outs
    for key in EXPECTED:
        assert any(key in line for line in lines), key


def _data_dir() -> Path | None:
    from sparsefs.cli._checks import shared_data_dir

    return shared_data_dir()


@pytest.mark.slow
def test_readme_shell_block_runs_in_an_empty_folder_after_installing_the_wheel(tmp_path):
    pytest.importorskip("hatchling")
    if not (REPO / "pyproject.toml").is_file():
        pytest.skip("not a source checkout")
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(wheels), str(REPO)], check=True, cwd=tmp_path)
    wheel = next(wheels.glob("sparsefs-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                    "--no-deps", "-q", str(wheel)], check=True)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig."
                                "get_paths()['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    # the dependencies of the test interpreter, after the fresh environment's own packages
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    data = _data_dir()
    if data is not None:
        env["SPARSEFS_DATA"] = str(data)
    else:
        env.pop("SPARSEFS_DATA", None)
    work = tmp_path / "empty"
    work.mkdir()
    where = subprocess.run([str(python), "-c", "import sparsefs; print(sparsefs.__file__)"],
                           capture_output=True, text=True, check=True, env=env, cwd=work)
    assert where.stdout.strip().startswith(str(venv)), where.stdout
    assert shutil.which("sparsefs", path=env["PATH"]).startswith(str(venv))
    skipped = []
    for line in readme_shell_block():
        if "ALLAML" in line and (data is None or not (data / "ALLAML.mat").is_file()):
            skipped.append(line)
            continue
        proc = subprocess.run(line, shell=True, cwd=work, env=env, capture_output=True,
                              text=True, timeout=900)
        assert proc.returncode == 0, f"{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        assert "Traceback" not in proc.stderr, proc.stderr
        for key, names in EXPECTED.items():
            if key in line:
                for name in names:
                    assert (work / name).exists(), f"{line}: no {name}"
    if skipped:
        pytest.skip(f"ran every line but {skipped} (ALLAML.mat not in SPARSEFS_DATA)")
