"""Issue #31, "the first hour, round two": one or more tests per numbered row, through
``main(argv)`` or a subprocess, as a new user meets the command line.

Independent checks used: the input files' bytes (sha256 before and after: nothing lost), the
file system (what is written, what is left behind), ``sys.modules`` of a fresh interpreter
after a refusal (nothing heavy imported), the messages' own words (flag, file, row, column),
scikit-learn's matplotlib artists (legend positions, figure sizes), and closed-form
expectations for the progress estimate.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.io

from sparsefs.cli import main
from sparsefs.cli.tests.conftest import write_expression_csv

# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------


def _digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _err_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    lines = [ln for ln in err.splitlines() if not ln.startswith("sparsefs: note:")]
    assert len(lines) == 1 and lines[0].startswith("sparsefs: error:"), err
    assert "Traceback" not in err
    return lines[0]


def _run(argv) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # usage errors
        return int(exc.code)


def _write_data(tmp_path: Path, fmt: str) -> tuple[Path, list[str]]:
    """A 30 x 6 data set with labels in format ``fmt``; returns the path and the extra
    arguments ``select`` needs (``--target`` for tables and AnnData)."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 15)
    X = rng.normal(size=(30, 6))
    X[:, 2] += 2.0 * y
    path = tmp_path / f"d.{fmt}"
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(6)]).assign(label=y)
    if fmt == "csv":
        frame.to_csv(path, index=False)
        return path, ["--target", "label"]
    if fmt == "tsv":
        frame.to_csv(path, index=False, sep="\t")
        return path, ["--target", "label"]
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
        frame.to_parquet(path, index=False)
        return path, ["--target", "label"]
    if fmt == "npz":
        np.savez(path, X=X, y=y)
        return path, []
    if fmt == "mat":
        scipy.io.savemat(path, {"X": X, "Y": y[:, None]})
        return path, []
    anndata = pytest.importorskip("anndata")
    obs = pd.DataFrame({"label": pd.Categorical(y.astype(str))},
                       index=[f"c{i}" for i in range(30)])
    anndata.AnnData(X.astype(np.float32), obs=obs).write_h5ad(path)
    return path, ["--target", "label"]


FORMATS = ["csv", "tsv", "parquet", "npz", "mat", "h5ad"]


# ------------------------------------------------------------------------------------------
# row 1: an output never resolves to an input file
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("force", [False, True], ids=["no-force", "force"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("how", ["same", "relative", "symlink", "hardlink"])
def test_1_select_never_writes_over_its_input(tmp_path, monkeypatch, capsys, fmt, how, force):
    """--out as the data file itself (tables: the same name; every format through a symlink
    or a hard link named .csv, and through a relative path from another folder)."""
    path, extra = _write_data(tmp_path, fmt)
    before = _digest(path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    if how == "same" and fmt in ("csv", "tsv"):
        out = str(path)
    elif how == "relative" and fmt in ("csv", "tsv"):
        out = os.path.join("..", path.name)
    elif how == "hardlink":
        out = "hard.csv"
        os.link(path, out)
    else:
        out = "link.csv"
        os.symlink(os.path.join("..", path.name) if how == "relative" else path, out)
    argv = ["select", os.path.join("..", path.name), "-m", "fisher_score", "-k", "2",
            *extra, "--out", out, *(["--force"] if force else [])]
    assert main(argv) == 1
    err = _err_line(capsys)
    assert "is the input file" in err and "never overwritten" in err, err
    assert _digest(path) == before
    assert not list(tmp_path.rglob("*.meta.json")) and not list(tmp_path.rglob(".*.tmp"))


def test_1_write_h5ad_and_stability_plot_never_write_over_the_input(tmp_path, capsys):
    path, extra = _write_data(tmp_path, "h5ad")
    before = _digest(path)
    base = ["select", str(path), "-m", "fisher_score", *extra, "--out",
            str(tmp_path / "o.csv"), "--force"]
    assert main([*base, "-k", "2", "--write-h5ad", str(path)]) == 1
    assert "is the input file" in _err_line(capsys)
    os.symlink(path, tmp_path / "plot.png")
    assert main([*base, "-k", "2", "--stability", "4", "--stability-plot",
                 str(tmp_path / "plot.png")]) == 1
    assert "is the input file" in _err_line(capsys)
    assert _digest(path) == before


def test_1_two_outputs_naming_one_file_are_refused(tmp_path, capsys):
    path, extra = _write_data(tmp_path, "h5ad")
    out = tmp_path / "o.h5ad"
    os.symlink(out, tmp_path / "p.png")
    assert main(["select", str(path), "-m", "fisher_score", *extra, "-k", "2", "--out",
                 str(tmp_path / "o.csv"), "--write-h5ad", str(out), "--stability", "4",
                 "--stability-plot", str(tmp_path / "p.png")]) == 1
    assert "name the same file" in _err_line(capsys)


@pytest.mark.parametrize("force", [False, True], ids=["no-force", "force"])
def test_1_compare_and_export_never_write_over_their_inputs(tmp_path, capsys, force):
    """compare --out whose results.csv is the data file; export --out = the data file."""
    cmp_dir = tmp_path / "cmp"
    cmp_dir.mkdir()
    data = cmp_dir / "results.csv"
    write_expression_csv(tmp_path, 10, 6, {1: 2.0})[0].rename(data)
    before = _digest(data)
    flag = ["--force"] if force else []
    assert main(["compare", str(data), "-t", "diagnosis", "--methods", "fisher_score",
                 "--k", "2", "--cv", "2", "--out", str(cmp_dir), "--no-progress", *flag]) == 1
    assert "is the input file" in _err_line(capsys)
    assert main(["export", str(data), "-t", "diagnosis", "--out", str(data), *flag]) == 1
    assert "is the input file" in _err_line(capsys)
    assert _digest(data) == before
    assert sorted(p.name for p in cmp_dir.iterdir()) == ["results.csv"]


# ------------------------------------------------------------------------------------------
# row 3: distinct outputs never collide
# ------------------------------------------------------------------------------------------


def test_3_tables_differing_in_extension_have_their_own_settings_file(tmp_path, capsys):
    path = write_expression_csv(tmp_path, 15, 12, {7: 3.0})[0]
    for name in ("genes.csv", "genes.json", "genes.tsv"):
        assert main(["select", str(path), "-t", "diagnosis", "-m", "fisher_score", "-k", "3",
                     "--out", str(tmp_path / name)]) == 0, capsys.readouterr().err
    for name in ("genes.csv", "genes.json", "genes.tsv"):
        meta = json.loads((tmp_path / f"{name}.meta.json").read_text())
        assert meta["command"].endswith(name)
    assert main(["select", str(path), "-t", "diagnosis", "-m", "fisher_score",
                 "--out", str(tmp_path / "x.meta.json")]) == 1
    assert "kept for the settings file" in _err_line(capsys)


# ------------------------------------------------------------------------------------------
# row 4: -k and --fdr / --fwer
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", [["--fdr", "0.05"], ["--fwer", "0.1"]])
def test_4_k_with_an_error_rate_is_refused(tmp_path, capsys, rule):
    path = write_expression_csv(tmp_path, 15, 12, {7: 3.0})[0]
    assert main(["select", str(path), "-t", "diagnosis", "-m", "fisher_score", "-k", "5",
                 *rule, "--out", str(tmp_path / "o.csv")]) == 1
    err = _err_line(capsys)
    assert f"-k 5 and {rule[0]} {float(rule[1]):g}" in err and "drop -k" in err
    assert not (tmp_path / "o.csv").exists()
    assert main(["select", str(path), "-t", "diagnosis", "-m", "fisher_score", *rule,
                 "--out", str(tmp_path / "o.csv")]) == 0
    meta = json.loads((tmp_path / "o.csv.meta.json").read_text())
    assert meta["k"] is None and meta["n_selected"] == meta["error_control"]["n_selected"]


# ------------------------------------------------------------------------------------------
# row 5: refusals that need only the arguments and the file system import nothing heavy
# ------------------------------------------------------------------------------------------

_PROBE = """
import sys, time
start = time.perf_counter()
from sparsefs.cli import main
try:
    code = main({argv!r})
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in ("numpy", "scipy", "sklearn", "pandas", "numba", "matplotlib",
                           "tqdm", "sparsefs.harness", "sparsefs.selection") if m in sys.modules)
print("RESULT", code, ",".join(heavy), f"{{time.perf_counter() - start:.3f}}")
"""


def _refusals(tmp: Path) -> list[tuple[list[str], str]]:
    csv = tmp / "e.csv"
    csv.write_text("a,b,y\n1,2,x\n3,4,z\n")
    (tmp / "report").mkdir()
    (tmp / "report" / "fisher_score.md").write_text("earlier\n")
    out = str(tmp / "o.csv")
    cases = [
        (["select", str(csv), "-t", "y", "-m", "fisher_score", "-k", "0", "--out", out],
         "argument -k"),
        (["select", str(csv), "-t", "y", "-m", "fisher_score", "-k", "1.5", "--out", out],
         "argument -k"),
        (["select", str(csv), "-t", "y", "-m", "fisher_score", "--seed", "-1", "--out", out],
         "argument --seed"),
        (["select", str(tmp / "missing.csv"), "-m", "fisher_score", "--out", out],
         "no such data file"),
        (["select", str(csv), "-t", "y", "-m", "nope", "--out", out], "unknown method"),
        (["select", str(csv), "-t", "y", "-m", "fisher_score", "-p", "alpha=1", "--out",
          out], "no parameter alpha"),
        (["select", str(csv), "-m", "fisher_score", "--out", out], "--target"),
        (["select", str(csv), "-t", "y", "-m", "laplacian_score", "--fdr", "0.1", "--out",
          out], "unsupervised"),
        (["select", str(csv), "-t", "y", "-m", "fisher_score", "-k", "2", "--fdr", "0.1",
          "--out", out], "two rules"),
        (["select", str(csv), "-t", "y", "-m", "fisher_score", "--out", str(tmp)],
         "is a directory"),
        (["select", str(csv), "-t", "y", "-m", "fisher_score", "--out",
          str(tmp / "nodir" / "o.csv")], "does not exist"),
        (["select", str(csv), "-t", "y", "-m", "fisher_score", "--out", str(csv),
          "--force"], "is the input file"),
        (["select", "ALLAMLX", "-m", "fisher_score", "--out", out], "no such data file"),
        (["compare", "default", "--methods", "nope", "--out", str(tmp / "c")],
         "unknown method"),
        (["compare", "default", "--methods", "fisher_score", "--k", "abc", "--out",
          str(tmp / "c")], "argument --k"),
        (["compare", "default", "--methods", "fisher_score", "--cv", "1", "--out",
          str(tmp / "c")], "argument --cv"),
        (["compare", "default", "--methods", "fisher_score", "--cv", "none", "--out",
          str(tmp / "c")], "held-out rows"),
        (["compare", str(tmp / "missing.csv"), "--methods", "fisher_score", "--out",
          str(tmp / "c")], "no such data file"),
        (["reproduce", "fisher_score", "--out", str(tmp / "report")], "--force"),
        (["export", "default", "--out", str(tmp / "x.xlsx")], "extension"),
        # the outcome options of issues #30 and #32 go through the same layer
        (["select", str(csv), "--time", "a", "-m", "lasso", "--out", out], "needs both"),
        (["select", str(csv), "--time", "a", "--event", "b", "-t", "y", "-m", "lasso",
          "--out", out], "not both"),
        (["select", str(csv), "--continuous", "-m", "lasso", "--out", out],
         "--continuous reads --target"),
        (["select", str(csv), "--time", "a", "--event", "b", "--continuous", "-m", "lasso",
          "--out", out], "goes without it"),
        (["select", "default", "--groups", "g", "-m", "fisher_score", "--fdr", "0.1", "--out",
          out], "apply to data files only"),
        (["select", str(csv), "-t", "y", "--groups", "a", "-m", "fisher_score", "-k", "1",
          "--out", out], "does not use groups"),
        (["compare", "default", "--time", "a", "--event", "b", "--methods", "lasso", "--out",
          str(tmp / "c")], "name columns of a data file"),
        (["compare", "default", "--groups", "g", "--methods", "fisher_score", "--out",
          str(tmp / "c")], "--groups names a column"),
        (["compare", str(csv), "--event", "b", "--methods", "lasso", "--out", str(tmp / "c")],
         "needs both"),
        (["compare", str(csv), "--time", "a", "--event", "b", "--smote", "--methods", "lasso",
          "--out", str(tmp / "c")], "--smote"),
        (["compare", str(csv), "--time", "a", "--event", "b", "--cv", "none", "--methods",
          "lasso", "--out", str(tmp / "c")], "held-out rows"),
        (["compare", str(csv), "--continuous", "--methods", "lasso", "--out", str(tmp / "c")],
         "--continuous reads --target"),
        (["compare", str(csv), "-t", "y", "--metrics", "c_index", "--methods", "lasso",
          "--out", str(tmp / "c")], "--metrics"),
    ]
    if os.path.isdir("/proc") and sys.platform.startswith("linux"):
        cases.append((["select", str(csv), "-t", "y", "-m", "fisher_score", "--out",
                       "/proc/o.csv"], "cannot write"))
    return cases


def test_5_light_copies_of_the_harness_names_are_the_harness_names():
    """Reference: sparsefs.harness._spec, which compare's up-front checks mirror without
    importing it (downstream estimators and each protocol's metrics, #32's outcomes too)."""
    from sparsefs.cli._harness import ESTIMATORS, METRICS
    from sparsefs.harness import _spec

    assert set(ESTIMATORS) == set(_spec.BUILTIN_ESTIMATORS)
    for protocol, names in METRICS.items():
        assert names == _spec._PROTOCOL_METRICS[protocol], protocol
    assert set(METRICS) == set(_spec.PROTOCOLS) - {"clustering"}  # compare has no --clustering


def test_5_every_refusal_needing_only_arguments_and_files_imports_nothing_heavy(tmp_path):
    """Independent check: the modules a fresh interpreter loaded when it refused (the time is
    printed by benchmarks/bench_cli_refusals.py; here only what cannot depend on the load).
    One interpreter per case, so that one case's imports cannot hide another's."""
    for argv, message in _refusals(tmp_path):
        proc = subprocess.run([sys.executable, "-c", _PROBE.format(argv=argv)],
                              capture_output=True, text=True, cwd=tmp_path)
        line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")][-1].split(" ")
        assert line[1] in ("1", "2"), (argv, proc.stderr)
        assert message in proc.stderr, (argv, proc.stderr)
        assert line[2] == "", f"{argv} imported {line[2]}"
        assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------------------------------
# row 6: messages name the flag, the file, the row and the column
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "expected"), [
    ("0", "argument -k: 0: give a count >= 1"),
    ("-5", "argument -k: -5: give a count >= 1"),
    ("1.5", "argument -k: 1.5: a fraction of the features must be in (0, 1]"),
    ("many", "argument -k: 'many': give a count"),
])
def test_6_bad_k_names_the_flag(tmp_path, capsys, k, expected):
    assert _run(["select", "default", "-m", "fisher_score", "-k", k, "--out",
                 str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert expected in err and "n_features_to_select" not in err


@pytest.mark.parametrize("seed", ["-1", str(2**32), "x"])
def test_6_bad_seed_names_the_flag(tmp_path, capsys, seed):
    assert _run(["select", "default", "-m", "fisher_score", "--seed", seed, "--out",
                 str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert "argument --seed" in err and "random_state" not in err


@pytest.mark.parametrize(("content", "expected"), [
    ("a,b,y\n1,2,x\n3,,z\n5,6,x\n",
     "a missing value (an empty cell or NaN) in column 'b', data row 2 (line 3)"),
    ("a,b,y\n1,2,x\n3,4,z\nnan,6,x\n",
     "a missing value (an empty cell or NaN) in column 'a', data row 3 (line 4)"),
    ("a,b,y\n1,inf,x\n3,4,z\n5,-inf,x\n",
     "an infinite value (inf) in column 'b', data row 1 (line 2); 2 such cells in all"),
    ("a,b,y\n1,2,x\n3,4,\n5,6,x\n",
     "the label column 'y' is empty in data row 2 (line 3)"),
])
def test_6_missing_and_infinite_cells_name_file_row_and_column(tmp_path, capsys, content,
                                                               expected):
    path = tmp_path / "cells.csv"
    path.write_text(content)
    assert main(["select", str(path), "-t", "y", "-m", "fisher_score", "-k", "1",
                 "--out", str(tmp_path / "o.csv")]) == 1
    err = _err_line(capsys)
    assert expected in err and "cells.csv" in err and "Input X contains" not in err, err


def test_6_parameter_values_name_the_flag_before_the_data_is_read(tmp_path, capsys):
    path = tmp_path / "big.csv"
    path.write_text("a,b,y\n1,2,x\n3,4,z\n")
    assert main(["select", str(path), "-t", "y", "-m", "fisher_score", "-p", "fdr=2",
                 "--out", str(tmp_path / "o.csv")]) == 1
    err = _err_line(capsys)
    assert err.startswith("sparsefs: error: -p fdr=2: must be") and "parameter of" not in err


# ------------------------------------------------------------------------------------------
# row 7: warnings as one-line notes
# ------------------------------------------------------------------------------------------


def test_7_fit_warnings_are_one_line_notes(tmp_path, capsys):
    path = write_expression_csv(tmp_path, 15, 12, {7: 3.0})[0]
    assert main(["select", str(path), "-t", "diagnosis", "-m", "ufcm", "-k", "3",
                 "-p", "max_iter=2", "--out", str(tmp_path / "o.csv")]) == 0
    err = capsys.readouterr().err
    notes = [ln for ln in err.splitlines() if ln.strip()]
    assert notes and all(ln.startswith("sparsefs: note: ") for ln in notes), err
    assert any("UFCM stopped at max_iter=2" in ln for ln in notes)
    assert ".py:" not in err and "Warning:" not in err and "site-packages" not in err


def test_7_warnings_of_parallel_harness_tasks_are_notes_too(capsys):
    """Warnings raised in joblib's worker processes come back to the main process (issued
    once per message, with their category) and so become notes there."""
    from sparsefs.cli._common import notes
    from sparsefs.harness import CVSpec, DataSpec, ExperimentSpec, MethodSpec, run

    spec = ExperimentSpec(
        name="w", protocol="unsupervised",
        datasets=[DataSpec(name="default", params={"n_noise_features": 20})],
        methods=[MethodSpec(stem="ufcm", params={"max_iter": 2, "n_restarts": 1})], k="2,4",
        cv=CVSpec(scheme="kfold", n_splits=2), n_runs=1)
    with notes():
        run(spec, n_jobs=2, progress=False)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines and all(ln.startswith("sparsefs: note: ") for ln in lines), err
    assert any("UFCM stopped at max_iter=2" in ln for ln in lines), err
    assert len(lines) == len(set(lines))  # each message once


# ------------------------------------------------------------------------------------------
# row 8: compare over every method
# ------------------------------------------------------------------------------------------


def test_8_methods_every_expands_to_the_registry(tmp_path):
    import argparse

    from sparsefs.cli._harness import plan_compare
    from sparsefs.utils import list_methods

    args = argparse.Namespace(methods="every,all", unsupervised=False, estimators=None,
                              metrics=None, cv="5", mode=None, data=["default"], target=None,
                              transpose=False, out=str(tmp_path / "c"), force=False,
                              parquet=False)
    plan = plan_compare(args)
    assert plan.methods == [m.stem for m in list_methods()] + ["all"]


def test_8_progress_estimate_is_weighted_by_cost_and_learns():
    """Closed form: two methods, priors 1 s and 9 s per task, three folds each. After the
    first task of the cheap method (measured 2 s), the unknown expensive tasks are scaled
    by the measured / prior ratio (2 / 1): remaining = 2 * 2 + 3 * 9 * 2 = 58 s of work,
    times the wall time per unit of work done so far."""
    from sparsefs.harness._costs import TaskProgress

    keys = [(0, 0), (0, 1)] * 3
    bar = TaskProgress(keys, {(0, 0): 1.0, (0, 1): 9.0}, enabled=False, desc="t")
    bar.start -= 4.0  # 4 s of wall time have passed when the first task ends
    bar.done((0, 0), 2.0)
    assert bar.expected((0, 1)) == pytest.approx(18.0)
    assert bar.eta() == pytest.approx(58.0 * (4.0 + 1e-3) / 2.0, rel=1e-2)
    unweighted = TaskProgress(keys, None, enabled=False, desc="t")
    unweighted.start -= 4.0
    unweighted.done((0, 0), 2.0)
    assert unweighted.eta() == pytest.approx(5 * 2.0 * 2.0, rel=1e-2)  # counts tasks only
    bar.close()
    unweighted.close()


def test_8_cost_note_up_front_for_a_long_run(tmp_path, capsys, monkeypatch):
    import sparsefs.cli._harness as h

    monkeypatch.setattr(h, "NOTE_SECONDS", 0.0)
    assert main(["compare", "default", "--methods", "fisher_score", "--k", "2", "--cv", "2",
                 "--estimators", "nb", "--metrics", "accuracy", "--no-figures", "--out",
                 str(tmp_path / "c"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "sparsefs: note: 1 method(s) x 1 data set(s): 2 fold fits, about" in err


def test_8_styles_legends_sizes_and_tables_stay_readable_at_30_methods(tmp_path):
    """30 labelled copies of the Fisher score through the harness: every line has its own
    (colour, line style), the legend sits outside the panels, every figure is within
    MAX_FIGURE_INCHES, and the report's tables have at most 8 method columns."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import sparsefs.plotting._figures as figures
    from sparsefs.harness import CVSpec, DataSpec, ExperimentSpec, MethodSpec, markdown_report
    from sparsefs.harness import run as run_experiment
    from sparsefs.plotting import method_styles

    styles = method_styles([f"m{i}" for i in range(40)])
    pairs = {(s["color"], s["linestyle"]) for s in styles.values()}
    assert len(pairs) == 40
    methods = [MethodSpec(stem="fisher_score", label=f"fisher {i:02d}") for i in range(30)]
    spec = ExperimentSpec(name="many", datasets=[DataSpec(name="default",
                                                          params={"n_noise_features": 20})],
                          methods=methods, k="1:3", cv=CVSpec(scheme="kfold", n_splits=2),
                          estimators=["nb"], metrics=["accuracy"])
    res = run_experiment(spec, progress=False, keep_predictions=True)
    saved = {}
    real_save = figures.save_figure

    def keep(fig, path, dpi=110):
        saved[Path(path).name] = fig
        return real_save(fig, path, dpi)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(figures, "save_figure", keep)
        figures.report_figures(res, tmp_path)
    for name, fig in saved.items():
        w, h = fig.get_size_inches()
        assert w <= figures.MAX_FIGURE_INCHES[0] + 1e-9, name
        assert h <= figures.MAX_FIGURE_INCHES[1] + 1e-9, name
    vs_k = saved["default_accuracy_vs_k.png"]
    assert vs_k.legends, "one legend for the figure"
    vs_k.draw_without_rendering()
    fig_legend = vs_k.legends[0].get_window_extent()
    for ax in vs_k.axes:
        if ax.get_visible():
            assert ax.get_legend() is None
            assert fig_legend.x0 >= ax.get_window_extent().x1 - 1  # right of every panel
    saved["default_roc.png"].draw_without_rendering()
    roc_ax = saved["default_roc.png"].axes[0]
    legend = roc_ax.get_legend()
    assert legend.get_window_extent().x0 >= roc_ax.get_window_extent().x1 - 1
    report = markdown_report(res, title="t")
    widths = [line.count("|") - 1 for line in report.splitlines() if line.startswith("| data")]
    assert widths and max(widths) <= 2 + 8
    assert "Methods 25–30 of 30" in report


def test_8_score_figures_are_paged_grids(tmp_path):
    from sparsefs.plotting._figures import MAX_FIGURE_INCHES, panel_grid

    pages = panel_grid(28)
    assert sum(axes.size for _, axes in pages) >= 28
    for fig, _ in pages:
        w, h = fig.get_size_inches()
        assert w <= MAX_FIGURE_INCHES[0] and h <= MAX_FIGURE_INCHES[1]


# ------------------------------------------------------------------------------------------
# row 13: the remaining rough edges
# ------------------------------------------------------------------------------------------


def test_13_terminated_compare_leaves_nothing_and_stale_stages_are_removed(tmp_path):
    """SIGTERM during a run: the staged folder is removed (as after Ctrl-C). A stage left
    by a killed process (SIGKILL: no chance to clean up) is removed by the next run."""
    out = tmp_path / "cmp"
    stale = tmp_path / ".cmp.sparsefs-999999999-abc"
    stale.mkdir()
    (stale / "results.csv").write_text("half\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "sparsefs", "compare", "default", "--methods", "mrmr",
         "--k", "1:80", "--cv", "10", "--repeats", "5", "--out", str(out), "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not [p for p in tmp_path.iterdir()
                                          if p.name.startswith(f".cmp.sparsefs-{proc.pid}-")]:
        time.sleep(0.1)
    assert not stale.exists(), "the stale stage of a dead process was not removed"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert not out.exists() and not [p.name for p in tmp_path.iterdir()], err


def test_13_reproduce_needs_force_to_replace_a_report(tmp_path, capsys):
    from sparsefs.cli.tests.test_harness_cli import CONFIG

    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "toy.toml").write_text(CONFIG)
    out = tmp_path / "repro"
    args = ["reproduce", "toy", "--quick", "--config-dir", str(configs), "--out", str(out),
            "--no-progress", "--no-figures"]
    assert main(args) == 0
    (out / "toy" / "notes.md").write_text("hand-written\n")
    first = (out / "toy.md").read_text()
    assert main(args) == 1
    assert "--force" in _err_line(capsys) and (out / "toy.md").read_text() == first
    assert main([*args, "--force"]) == 0
    assert (out / "toy" / "notes.md").read_text() == "hand-written\n"  # never replaced
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_13_reproduce_list_says_when_it_finds_nothing(monkeypatch, capsys):
    import sparsefs.harness._reproduce as r

    assert main(["reproduce", "--list"]) == 0
    assert "fisher_score" in capsys.readouterr().out.split()
    monkeypatch.setattr(r, "config_dirs", lambda config_dir=None: [])
    assert main(["reproduce", "--list"]) == 1
    assert "no reproduction configs found" in _err_line(capsys)


def test_13_packaged_configs_are_found(tmp_path, monkeypatch):
    """The wheel's copy (sparsefs/_configs) is searched after the checkout's."""
    import sparsefs
    import sparsefs.harness._reproduce as r

    fake = tmp_path / "site" / "sparsefs"
    (fake / "_configs").mkdir(parents=True)
    (fake / "_configs" / "shipped.toml").write_text("")
    monkeypatch.setattr(sparsefs, "__file__", str(fake / "__init__.py"))
    monkeypatch.delenv("SPARSEFS_CONFIGS", raising=False)
    monkeypatch.chdir(tmp_path)
    assert r.config_dirs() == [fake / "_configs"]  # no checkout there: no pyproject.toml
    assert r.list_reproductions() == ["shipped"]


def test_13_out_naming_a_folder_says_so(tmp_path, capsys):
    (tmp_path / "genes").mkdir()
    assert main(["select", "default", "-m", "fisher_score", "--out",
                 str(tmp_path / "genes")]) == 1
    assert "is a directory" in _err_line(capsys)


def test_13_progress_shows_a_fast_method_advance(tmp_path, capsys):
    assert main(["select", "default", "-m", "fisher_score", "-k", "3", "--progress",
                 "--out", str(tmp_path / "o.csv")]) == 0
    err = capsys.readouterr().err
    assert "FisherScore: fit on 178 x 500" in err and "3/3 steps" in err, err


def test_13_unsupervised_method_with_fdr_explains_itself(tmp_path, capsys):
    path = write_expression_csv(tmp_path, 15, 12, {7: 3.0})[0]
    assert main(["select", str(path), "-t", "diagnosis", "-m", "laplacian_score", "--fdr",
                 "0.1", "--out", str(tmp_path / "o.csv")]) == 1
    err = _err_line(capsys)
    assert "LaplacianScore is unsupervised" in err and "requires y" not in err


def test_13_export_writes_a_table_select_reads_back(tmp_path, capsys):
    out = tmp_path / "expr.csv"
    assert main(["export", "default", "--out", str(out), "--label", "cultivar"]) == 0
    frame = pd.read_csv(out)
    assert frame.shape == (178, 501) and frame["cultivar"].nunique() == 3
    assert main(["export", "default", "--out", str(out)]) == 1
    assert "--force" in _err_line(capsys)
    assert main(["select", str(out), "-t", "cultivar", "-m", "fisher_score", "-k", "13",
                 "--out", str(tmp_path / "g.csv")]) == 0
    from sparsefs.datasets import load_default

    kept = set(pd.read_csv(tmp_path / "g.csv").query("selected")["feature"])
    truth = set(np.asarray(load_default().feature_names)[load_default().support])
    assert kept == truth
