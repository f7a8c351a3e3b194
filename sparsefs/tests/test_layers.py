"""The package's layers, read from its imports (AST, not by importing it).

Rules (STYLE.md section 3, issues #23 and #34): no import cycle between modules (a submodule
importing its own package's ``__init__`` counts); ``_kernels`` imports neither scikit-learn nor
any part of sparsefs outside ``_kernels``; every subpackage sits on a floor (:data:`FLOORS`) and
imports only from its own floor or lower ones (the estimator packages never reach ``harness``,
``plotting`` or ``cli``; ``plotting`` never reaches ``harness``; nothing but ``cli`` reaches
``cli``). Inside ``_kernels`` (issue #34) a method kernel imports only the shared layer
(:data:`SHARED_KERNELS`) and its own family's modules, the shared layer imports no method kernel,
and no kernel takes another family's private names. Every import counts, at module level or
inside a function: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import collections
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent

#: Cycles still to break (#23), as frozensets of module names; the test fails on any other
#: cycle, and on a listed one that no longer exists (so the list only shrinks).
KNOWN_CYCLES: set[frozenset[str]] = set()


def module_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package modules it imports (tests excluded)."""
    mods: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root.parent)
        if "tests" in rel.parts:
            continue
        name = ".".join(rel.with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = collections.defaultdict(set)
    for name, path in mods.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = here.split(".")
                    parts = parts[: len(parts) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                # ``from pkg import sub`` depends on the submodule; ``from pkg import name``
                # on the package (its __init__)
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                    for a in node.names
                ]
            for target in targets:
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != name and target.split(".")[0] == package:
                    graph[name].add(target)
        graph.setdefault(name, set())
    return dict(graph)


def external_imports(root: Path) -> dict[str, set[str]]:
    """Module -> top-level names of the non-package modules it imports."""
    out: dict[str, set[str]] = collections.defaultdict(set)
    for path in root.rglob("*.py"):
        rel = path.relative_to(root.parent)
        if "tests" in rel.parts:
            continue
        name = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                out[name].update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                out[name].add(node.module.split(".")[0])
    return dict(out)


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(frozenset(comp))
    return found


GRAPH = module_graph(PKG, "sparsefs")

#: The floors, lowest first: a module imports from its own floor or lower ones only.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("_kernels", "exceptions"),                       # math on arrays
    ("", "utils", "metrics", "datasets", "_dask"),  # the package root, shared tools, data
    ("base",),                                        # the estimator contract
    ("selection", "classification", "clustering"),  # the estimators
    ("plotting", "tl", "get"),                        # figures and the scanpy front end
    ("harness", "benchmark"),                         # evaluation (benchmark: its old name)
    ("cli", "__main__", "docs"),                      # the command line, the docs' tools
)


def floor_of(module: str) -> int:
    """The floor of ``sparsefs.<sub>...`` (``""``: the package root)."""
    sub = module.split(".")[1] if "." in module else ""
    for i, names in enumerate(FLOORS):
        if sub in names:
            return i
    raise KeyError(f"{module}: subpackage {sub!r} has no floor; add it to FLOORS.")


def test_no_import_cycles():
    found = set(cycles(GRAPH))
    new = [sorted(c) for c in found - KNOWN_CYCLES]
    gone = [sorted(c) for c in KNOWN_CYCLES - found]
    assert not new, f"import cycles: {new}"
    assert not gone, f"listed cycles that no longer exist (remove them from KNOWN_CYCLES): {gone}"


def test_kernels_import_only_kernels_and_no_sklearn():
    ext = external_imports(PKG)
    for mod, targets in GRAPH.items():
        if not mod.startswith("sparsefs._kernels"):
            continue
        outside = sorted(t for t in targets if not t.startswith("sparsefs._kernels"))
        assert not outside, f"{mod} imports {outside}"
        assert "sklearn" not in ext.get(mod, set()), f"{mod} imports scikit-learn"


def test_every_import_goes_to_the_same_floor_or_down():
    up = sorted(f"{mod} (floor {floor_of(mod)}) -> {t} (floor {floor_of(t)})"
                for mod, targets in GRAPH.items() for t in targets
                if floor_of(t) > floor_of(mod))
    assert not up, "imports to a higher floor:\n" + "\n".join(up)


def test_the_floor_check_sees_an_upward_import():
    assert floor_of("sparsefs.plotting._figures") < floor_of("sparsefs.harness")
    assert floor_of("sparsefs") < floor_of("sparsefs.selection._fisher_score")
    with pytest.raises(KeyError, match="no floor"):
        floor_of("sparsefs.newthing.mod")


@pytest.mark.parametrize("family", ["selection", "classification", "clustering"])
def test_estimators_do_not_import_harness_plots_or_cli(family):
    banned = ("sparsefs.harness", "sparsefs.plotting", "sparsefs.cli")
    for mod, targets in GRAPH.items():
        if mod.startswith(f"sparsefs.{family}"):
            bad = sorted(t for t in targets if t.startswith(banned))
            assert not bad, f"{mod} imports {bad}"


def test_nothing_imports_cli():
    for mod, targets in GRAPH.items():
        if mod.startswith("sparsefs.cli") or mod == "sparsefs.__main__":
            continue
        assert not [t for t in targets if t.startswith("sparsefs.cli")], mod


def test_the_checks_catch_a_deliberate_cycle(tmp_path):
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from toy.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import x  # lazy, still a cycle\n")
    (pkg / "c.py").write_text("import toy.a\n")
    graph = module_graph(pkg, "toy")
    assert cycles(graph) == [frozenset({"toy.a", "toy.sub.b"})]
    (pkg / "sub" / "b.py").write_text("def f():\n    return 1\n")
    assert cycles(module_graph(pkg, "toy")) == []


#: The shared layer inside ``_kernels`` (issue #34): what any method kernel may use - array
#: dispatch, the implicitly centred sparse matrix, duplicate columns and scale guards, class and
#: column statistics (the Fisher ratio among them), graphs, the k-means core, the l2,1 /
#: elastic-net penalties and their solvers (group_lasso, l21, fista, elastic_net), ranking,
#: multiple testing and stability, threads.
SHARED_KERNELS = frozenset({
    "arrays", "centered", "columns", "elastic_net", "fista", "fisher_score", "graphs",
    "group_lasso", "kmeans", "l21", "multiple_testing", "ranking", "stability", "stats",
    "threads",
})

#: Method kernels written as several modules: module -> its family (by default a module is
#: its own family, and ``smba_*`` modules belong to ``smba``).
KERNEL_FAMILIES = {
    "kos_kernel": "sparse_kos", "kos_closed_form": "sparse_kos", "kos_weight_step": "sparse_kos",
    "sparse_centers_cv": "sparse_centers",
    "mcfs_lars": "mcfs",  # MCFS's lasso-LARS on the implicitly centred sparse design
    "sparse_kmeans_alternation": "sparse_kmeans",
    "ufcm_wstep": "ufcm", "ufcm_kmeans": "ufcm",
    "coordinate_descent": "cox",  # the Gaussian / Cox elastic net: the Cox datafit's solver
}

#: Private names still imported across families, as "importer -> module._name"; the test fails
#: on any other, and on a listed one that is gone (so the list only shrinks).
KNOWN_PRIVATE_IMPORTS: set[str] = set()


def _family(leaf: str) -> str:
    if leaf.startswith("smba"):
        return "smba"
    return KERNEL_FAMILIES.get(leaf, leaf)


def method_kernel_violations(graph: dict[str, set[str]], family: str | None = None) -> list[str]:
    """Imports of method kernels (of ``family``, or every one) that reach neither the shared
    layer nor their own family, and imports of the shared layer that reach a method kernel."""
    prefix = "sparsefs._kernels."
    bad = []
    for mod, targets in graph.items():
        if not mod.startswith(prefix):
            continue
        leaf = mod.removeprefix(prefix)
        inner = [t for t in sorted(targets) if t.startswith(prefix)]
        if leaf in SHARED_KERNELS:
            bad += [f"{mod} -> {t}" for t in inner
                    if t.removeprefix(prefix) not in SHARED_KERNELS]
        elif family is None or _family(leaf) == family:
            bad += [f"{mod} -> {t}" for t in inner
                    if t.removeprefix(prefix) not in SHARED_KERNELS
                    and _family(t.removeprefix(prefix)) != _family(leaf)]
    return bad


def private_kernel_imports(root: Path) -> set[str]:
    """``importer -> module._name`` for every private name a kernel takes from a kernel of
    another family (``from m import _x``, or ``m._x`` on an imported module)."""
    found = set()
    kernels = root / "_kernels"
    leaves = {p.stem for p in kernels.glob("*.py")}
    for path in kernels.glob("*.py"):
        leaf = path.stem
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level:
                    mod = "sparsefs._kernels" + ("." + mod if mod else "")
                if mod == "sparsefs._kernels":
                    aliases.update({a.asname or a.name: a.name for a in node.names
                                    if a.name in leaves})
                elif mod.startswith("sparsefs._kernels."):
                    target = mod.split(".")[2]
                    if _family(target) != _family(leaf):
                        found.update(f"{leaf} -> {target}.{a.name}" for a in node.names
                                     if a.name.startswith("_"))
            elif isinstance(node, ast.Import):
                aliases.update({a.asname: a.name.split(".")[2] for a in node.names
                                if a.asname and a.name.startswith("sparsefs._kernels.")})
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                    and _family(aliases[node.value.id]) != _family(leaf)):
                found.add(f"{leaf} -> {aliases[node.value.id]}.{node.attr}")
    return found


def test_method_kernels_use_only_the_shared_layer_and_their_own_family():
    assert method_kernel_violations(GRAPH) == []


def test_no_kernel_takes_another_familys_private_names():
    assert private_kernel_imports(PKG) == KNOWN_PRIVATE_IMPORTS


def test_smba_kernels_use_only_the_shared_layer_and_their_own_modules():
    assert method_kernel_violations(GRAPH, "smba") == []


def test_the_family_check_sees_a_foreign_import():
    graph = {"sparsefs._kernels.smba_x": {"sparsefs._kernels.l21", "sparsefs._kernels.columns",
                                          "sparsefs._kernels.relieff"},
             "sparsefs._kernels.group_lasso": {"sparsefs._kernels.smba"},
             "sparsefs._kernels.kos_kernel": {"sparsefs._kernels.sparse_kos"}}
    assert method_kernel_violations(graph) == [
        "sparsefs._kernels.smba_x -> sparsefs._kernels.relieff",
        "sparsefs._kernels.group_lasso -> sparsefs._kernels.smba",
    ]


def test_the_private_name_check_sees_both_spellings(tmp_path):
    kernels = tmp_path / "pkg" / "_kernels"
    kernels.mkdir(parents=True)
    (kernels / "relieff.py").write_text("def _helper():\n    return 1\n")
    (kernels / "ufcm.py").write_text(
        "from sparsefs._kernels.relieff import _helper\n"
        "from sparsefs._kernels import relieff as _r\n"
        "x = _r._helper\n"
    )
    (kernels / "kos_kernel.py").write_text("from sparsefs._kernels.sparse_kos import _x\n")
    assert private_kernel_imports(tmp_path / "pkg") == {"ufcm -> relieff._helper"}
