"""Package-wide rules: layering, silence, the registry, the README and the CI script."""

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import sparsefs
from sparsefs.utils import get_method, list_methods
from sparsefs.utils._registry import methods_markdown

PKG = Path(sparsefs.__file__).parent
REPO = PKG.parent
MODULES = sorted(p for p in PKG.rglob("*.py") if "tests" not in p.relative_to(PKG).parts)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _rel(path):
    return path.relative_to(PKG).as_posix()


def test_kernels_import_neither_sklearn_nor_the_rest_of_sparsefs():
    for path in MODULES:
        if _rel(path).startswith("_kernels/"):
            for mod in _imports(path):
                assert not mod.startswith("sklearn"), f"{_rel(path)} imports {mod}"
                if mod.startswith("sparsefs"):
                    assert mod.startswith("sparsefs._kernels"), f"{_rel(path)} imports {mod}"


def test_nothing_imports_the_cli():
    for path in MODULES:
        if _rel(path).startswith("cli/") or _rel(path) == "__main__.py":
            continue
        assert not any(m.startswith("sparsefs.cli") for m in _imports(path)), _rel(path)


def test_estimators_do_not_import_harness_plotting_or_cli():
    for path in MODULES:
        if _rel(path).split("/")[0] in ("selection", "classification", "clustering", "base.py"):
            for mod in _imports(path):
                assert not re.match(r"sparsefs\.(benchmark|plotting|cli)", mod), _rel(path)


def test_library_code_is_silent_and_uses_no_global_rng():
    for path in MODULES:
        text = path.read_text(encoding="utf-8")
        # the command lines print: cli/ and python -m sparsefs.docs
        if not (_rel(path).startswith("cli/") or _rel(path) == "docs/__main__.py"):
            assert not re.search(r"^\s*print\(", text, re.M), f"print() in {_rel(path)}"
        assert "np.random.seed" not in text, _rel(path)
        if not _rel(path).startswith("plotting/"):
            tree = ast.parse(text)
            top = {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
            top |= {n.module or "" for n in tree.body if isinstance(n, ast.ImportFrom)}
            assert not any(m.startswith("matplotlib") for m in top), _rel(path)


def test_private_sklearn_imports_only_in_the_shim():
    for path in MODULES:
        if _rel(path) == "utils/_sklearn_compat.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sklearn"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private and "._" not in node.module, f"{_rel(path)}: {node.module}"


def test_registry_entries_resolve_and_are_consistent():
    methods = list_methods()
    assert methods, "the registry is empty"
    assert len({m.stem for m in methods}) == len(methods)
    for m in methods:
        cls = m.estimator
        assert cls.__name__ == m.name
        assert m.family in ("selector", "classifier", "clusterer")
        assert (PKG / "_kernels" / f"{m.kernel_stem}.py").exists() or m.stem.startswith("_")
        assert get_method(m.stem) is m and get_method(m.name.upper()) is m
        assert "n_features_to_select" in cls().get_params()
        public = getattr(__import__(m.import_path.split(":")[0], fromlist=["x"]), "__all__", [])
        assert m.name in public
    with pytest.raises(ValueError, match="known methods"):
        get_method("no-such-method")
    with pytest.raises(ValueError, match="family="):
        list_methods(family="regressor")
    assert next(m.name for m in list_methods(family="selector")) == "FisherScore"


def test_readme_methods_table_matches_registry():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- methods:start -->\n(.*?)\n<!-- methods:end -->", readme, re.S)
    assert block, "README lacks the methods table markers"
    assert block.group(1).strip() == methods_markdown().strip(), (
        "README methods table is stale; paste sparsefs.utils._registry.methods_markdown()"
    )


def _quick_start_lines():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1]
    block = section.split("```", 2)[1]
    lines = [ln.strip() for ln in block.splitlines()[1:] if ln.strip()]
    return [ln for ln in lines if not ln.startswith("#")]


def test_readme_has_two_setup_commands_and_ci_runs_the_second():
    lines = _quick_start_lines()
    assert len(lines) == 2, lines
    assert "sparsefs demo" in lines[0] and "pytest" in lines[1]
    # the test line uses both cores: its -n needs pytest-xdist in the test extra
    if re.search(r"pytest .*-n ", lines[1]):
        extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
            "optional-dependencies"]["test"]
        assert any(d.startswith("pytest-xdist") for d in extra), extra
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "Quick start" in ci and "sed -n 2p" in ci, ".ci/run must take the README's test line"


def test_python_dash_m_entry_point():
    out = subprocess.run([sys.executable, "-m", "sparsefs", "--version"], capture_output=True,
                         text=True, check=True)
    assert sparsefs.__version__ in out.stdout
