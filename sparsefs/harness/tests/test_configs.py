"""The repository's reproduction configs (configs/<stem>.toml) parse, validate and run."""

from pathlib import Path

import pytest

import sparsefs
from sparsefs.harness import ReproductionSpec, markdown_report, reproduce
from sparsefs.utils import get_method

CONFIGS = sorted((Path(sparsefs.__file__).resolve().parent.parent / "configs").glob("*.toml"))


@pytest.mark.skipif(not CONFIGS, reason="no configs/ directory (not a source checkout)")
@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_config_parses_and_names_registered_methods(path):
    spec = ReproductionSpec.from_toml(path)
    assert spec.title and spec.experiments
    for exp in (*spec.experiments, *spec.quick_version().experiments):
        for m in exp.methods:
            if m.stem:
                get_method(m.stem)
    for table in spec.tables:
        assert table.source, f"{table.id}: a paper table needs its source"
        exp = spec.experiment(table.experiment)
        labels = {d.display for d in exp.datasets}, {m.display for m in exp.methods}
        for v in table.values:
            assert v.dataset in labels[0], (table.id, v.dataset)
            assert v.method in labels[1], (table.id, v.method)


def test_fisher_score_quick_reproduction(shared_data):
    repro = reproduce("fisher_score", quick=True, progress=False)
    res = repro.results[0]
    assert not res.meta["skipped"]
    assert set(res.table["dataset"]) == {"colon", "lung_discrete"}
    text = markdown_report(repro.results, title="t", reproduction=repro.spec, quick=True)
    assert "every number in this report is ours" in text


@pytest.mark.slow
@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_full_reproduction_runs(path, shared_data):
    repro = reproduce(str(path), progress=False)
    for res in repro.results:
        assert len(res.table) > 0


def test_harness_layering():
    """benchmark reads estimators, data sets and metrics; it never imports plotting or the
    CLI (plotting reads benchmark results, the CLI composes both)."""
    import ast

    import sparsefs.harness as bench

    for path in Path(bench.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("sparsefs.plotting", "sparsefs.cli",
                                                   "matplotlib")), (path.name, node.module)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith(("matplotlib", "sparsefs.plotting")), \
                        path.name
