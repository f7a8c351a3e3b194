"""Intersphinx inventories for the projects the docs link to, written from the installed
packages (``python -m docs.sitebuild inventories``) and shipped in ``docs/_inventories``.

The build fetches nothing: each inventory lists the public names of a package with the URL
of their page under that project's documented URL scheme (``modules/generated/<name>.html``
for scikit-learn, ``reference/generated/<name>.html`` for numpy and scipy, ...), and the few
glossary terms and labels that the docstrings sparsefs inherits from scikit-learn refer to.
A name not listed stays plain text on the site (it is never a broken link).
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import zlib
from collections.abc import Iterator
from pathlib import Path

#: ``(name, role, uri)``; a role is ``py:class``, ``py:function``, ``std:term``, ...
Entry = tuple[str, str, str]

#: The base URL of each project (intersphinx_mapping in docs/conf.py uses the same).
BASE_URLS: dict[str, str] = {
    "python": "https://docs.python.org/3/",
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "sklearn": "https://scikit-learn.org/stable/",
    "pandas": "https://pandas.pydata.org/docs/",
    "anndata": "https://anndata.readthedocs.io/en/stable/",
    "matplotlib": "https://matplotlib.org/stable/",
    "dask": "https://docs.dask.org/en/stable/",
}


def _label_anchor(label: str) -> str:
    """The HTML id docutils gives an explicit ``.. _label:`` target."""
    from docutils.nodes import make_id

    return make_id(label)


def _term_anchor(term: str) -> str:
    """The HTML id Sphinx gives a glossary term."""
    from sphinx.util.nodes import _make_id

    return _make_id(f"term-{term}")


def _public(module_name: str) -> list[tuple[str, object]]:
    """``(name, object)`` for the public names of a module (``__all__``, else its dir)."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    out = []
    for name in names:
        try:
            out.append((name, getattr(module, name)))
        except (AttributeError, ImportError):  # a lazy or experimental name: leave it out
            continue
    return out


def _role(obj: object) -> str | None:
    if inspect.isclass(obj):
        return "py:exception" if issubclass(obj, BaseException) else "py:class"
    if callable(obj):
        return "py:function"
    return None


def _generated(module_names: list[str], page: str) -> Iterator[Entry]:
    """Every public class and function of the modules, on ``page.format(name=full name)``."""
    for modname in module_names:
        for name, obj in _public(modname):
            role = _role(obj)
            if role is not None and not inspect.ismodule(obj):
                full = f"{modname}.{name}"
                yield full, role, page.format(name=full) + f"#{full}"


def python_entries() -> Iterator[Entry]:
    """Built-in types, exceptions, a few standard-library classes, glossary terms."""
    functions = {"int", "float", "bool", "object", "slice", "callable", "len", "isinstance",
                 "print", "open", "repr", "hash", "iter", "next", "zip", "range"}
    stdtypes = {"str", "dict", "list", "tuple", "set", "frozenset", "bytes", "range"}
    for name in sorted(functions | stdtypes):
        page = "library/stdtypes.html" if name in stdtypes else "library/functions.html"
        role = "py:class" if inspect.isclass(getattr(builtins, name)) else "py:function"
        yield name, role, f"{page}#{name}"
    for name, obj in sorted(vars(builtins).items()):
        if inspect.isclass(obj) and issubclass(obj, BaseException) and not name.startswith("_"):
            yield name, "py:exception", f"library/exceptions.html#{name}"
    for name in ("None", "True", "False", "NotImplemented", "Ellipsis"):
        yield name, "py:data", f"library/constants.html#{name}"
    for module, names in {
        "pathlib": ["Path", "PurePath"],
        "os": ["PathLike"],
        "collections.abc": ["Sequence", "Mapping", "Iterable", "Iterator", "Callable",
                            "MutableMapping", "Collection", "Hashable"],
        "typing": ["Any", "Literal", "Optional", "Union"],
        "dataclasses": ["dataclass", "field"],
        "logging": ["Logger"],
        "tempfile": ["TemporaryDirectory"],
    }.items():
        for name in names:
            obj = getattr(importlib.import_module(module), name)
            role = _role(obj) or "py:data"
            yield f"{module}.{name}", role, f"library/{module}.html#{module}.{name}"
    for term in ("iterable", "iterator", "sequence", "generator", "mapping", "callable",
                 "path-like object", "file object", "hashable", "keyword argument",
                 "argument", "parameter", "context manager"):
        yield term, "std:term", f"glossary.html#{_term_anchor(term)}"
    yield "bltin-boolean-values", "std:label", "library/stdtypes.html#bltin-boolean-values"


def numpy_entries() -> Iterator[Entry]:
    """numpy's top-level functions and classes, numpy.random's generators, its glossary."""
    for name, obj in _public("numpy"):
        if inspect.ismodule(obj) or _role(obj) is None:
            continue
        if inspect.isclass(obj) and name not in ("ndarray", "dtype", "ufunc", "matrix"):
            continue  # scalar types live on one shared page
        full = f"numpy.{name}"
        yield full, _role(obj) or "py:function", f"reference/generated/{full}.html#{full}"
    random = {"Generator": "generator", "RandomState": "legacy", "default_rng": "generator"}
    for name, page in random.items():
        role = "py:function" if name == "default_rng" else "py:class"
        yield f"numpy.random.{name}", role, f"reference/random/{page}.html#numpy.random.{name}"
    for term in ("array_like", "array", "dtype", "broadcast", "view", "C order", "Fortran order",
                 "contiguous", "ndarray", "scalar"):
        yield term, "std:term", f"glossary.html#{_term_anchor(term)}"


def scipy_entries() -> Iterator[Entry]:
    """scipy.sparse, scipy.stats and scipy.linalg."""
    yield from _generated(["scipy.sparse", "scipy.stats", "scipy.linalg",
                           "scipy.sparse.linalg"], "reference/generated/{name}.html")


def sklearn_entries() -> Iterator[Entry]:
    """Every public class and function of scikit-learn, its glossary terms used by the
    docstrings sparsefs inherits, and the user-guide labels they cite."""
    import sklearn

    modules = [f"sklearn.{m}" for m in sklearn.__all__
               if not m.startswith("_") and m not in ("clone", "config_context", "get_config",
                                                       "set_config", "show_versions")]
    seen = set()
    for entry in _generated(modules, "modules/generated/{name}.html"):
        if entry[0] not in seen:
            seen.add(entry[0])
            yield entry
    for name in ("clone", "config_context", "get_config", "set_config", "show_versions"):
        full = f"sklearn.{name}"
        yield full, "py:function", f"modules/generated/{full}.html#{full}"
    for term in ("estimator", "estimators", "meta-estimator", "meta-estimators", "transformer",
                 "transformers", "classifier", "clusterer", "fit", "transform", "predict",
                 "fit_transform", "random_state", "n_jobs", "cross-validation splitter",
                 "CV splitter", "array-like", "sparse matrix", "feature_names_in_",
                 "n_features_in_", "get_feature_names_out", "set_output", "scorer",
                 "decision_function", "predict_proba", "labels_", "classes_", "sample",
                 "feature", "target", "supervised", "unsupervised", "Glossary"):
        yield term, "std:term", f"glossary.html#{_term_anchor(term)}"
    labels = {
        "metadata_routing": "metadata_routing.html",
        "accuracy_score": "modules/model_evaluation.html",
        "sphx_glr_auto_examples_miscellaneous_plot_set_output.py":
            "auto_examples/miscellaneous/plot_set_output.html",
        "cross_validation": "modules/cross_validation.html",
        "pipeline": "modules/compose.html",
        "feature_selection": "modules/feature_selection.html",
        "glossary": "glossary.html",
    }
    for label, page in labels.items():
        yield label, "std:label", f"{page}#{_label_anchor(label)}"
    # the set_output user-guide page moved between releases: its label points to the search
    yield "df_output_transform", "std:label", "search.html?q=set_output"


def pandas_entries() -> Iterator[Entry]:
    """pandas' top-level classes and functions."""
    for name, obj in _public("pandas"):
        role = _role(obj)
        if role is not None and not inspect.ismodule(obj):
            yield f"pandas.{name}", role, f"reference/api/pandas.{name}.html#pandas.{name}"


def anndata_entries() -> Iterator[Entry]:
    """The AnnData class."""
    yield "anndata.AnnData", "py:class", "generated/anndata.AnnData.html#anndata.AnnData"


def matplotlib_entries() -> Iterator[Entry]:
    """Axes, Figure and the pyplot functions."""
    for full in ("matplotlib.axes.Axes", "matplotlib.figure.Figure"):
        yield full, "py:class", f"api/_as_gen/{full}.html#{full}"
    yield from (e for e in _generated(["matplotlib.pyplot"], "api/_as_gen/{name}.html")
                if e[1] == "py:function")


def dask_entries() -> Iterator[Entry]:
    """dask.array's public classes and functions."""
    yield from _generated(["dask.array"], "generated/{name}.html")


PROJECTS = {
    "python": python_entries,
    "numpy": numpy_entries,
    "scipy": scipy_entries,
    "sklearn": sklearn_entries,
    "pandas": pandas_entries,
    "anndata": anndata_entries,
    "matplotlib": matplotlib_entries,
    "dask": dask_entries,
}


def inventory_bytes(project: str, entries: list[Entry]) -> bytes:
    """A Sphinx inventory (version 2) of ``entries``."""
    header = ("# Sphinx inventory version 2\n"
              f"# Project: {project}\n"
              "# Version: \n"
              "# The remainder of this file is compressed using zlib.\n").encode()
    lines = []
    for name, role, uri in sorted(set(entries)):
        if " " in name and not role.startswith("std:"):
            continue
        lines.append(f"{name} {role} -1 {uri} -\n")
    return header + zlib.compress("".join(lines).encode(), 9)


def write_inventories(outdir: Path | str) -> dict[str, int]:
    """Write ``<project>.inv`` for every project in :data:`PROJECTS` into ``outdir``.

    A project whose package is not installed is skipped (its old file, if any, is kept).

    Returns
    -------
    dict
        Project -> number of entries written.
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = {}
    for project, entries in PROJECTS.items():
        try:
            items = list(entries())
        except ImportError:
            continue
        (outdir / f"{project}.inv").write_bytes(inventory_bytes(project, items))
        written[project] = len(items)
    return written
