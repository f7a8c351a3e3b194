"""The documentation tooling, without building the site (fast; sphinx not needed).

Each check compares with something independent of the code under test: the modules' own
``__all__`` read by importing them, the registry's methods table, the zlib inventory format
parsed by hand, a page served over HTTP and read back with urllib.
"""

import importlib
import inspect
import urllib.error
import urllib.request
import zlib
from pathlib import Path

import pytest

import sparsefs
from sitebuild._api import (
    EXCLUDED,
    attribute_docs,
    missing_docstrings,
    public_modules,
    public_names,
    write_api_pages,
)
from sitebuild._browser import _PROBE, PAGES, _problems, _Server, _with_mark
from sitebuild._sphinx_ext import (
    GALLERY_ORDER,
    escape_citation_initials,
    gallery_sort_key,
    literal_attribute_names,
    methods_table,
)
from sparsefs.utils import list_methods
from sparsefs.utils._registry import methods_markdown

REPO = Path(sparsefs.__file__).resolve().parent.parent
DOCS = REPO / "docs"


def test_every_family_and_front_end_is_in_the_reference():
    mods = public_modules()
    for name in ["sparsefs", "sparsefs.selection", "sparsefs.classification",
                 "sparsefs.clustering", "sparsefs.metrics", "sparsefs.datasets",
                 "sparsefs.plotting", "sparsefs.tl", "sparsefs.get", "sparsefs.harness"]:
        assert name in mods
    assert mods[0] == "sparsefs"
    assert not [m for m in mods if any(p.startswith("_") for p in m.split("."))]
    assert not [m for m in mods if any(m == e or m.startswith(e + ".") for e in EXCLUDED)]
    assert not [m for m in mods if ".tests" in m]


def test_public_names_are_the_modules_all_each_documented_once():
    entries = public_names()
    for modname in public_modules():
        module = importlib.import_module(modname)
        assert [e.name for e in entries if e.module == modname] == list(module.__all__)
    # a re-exported object is documented where it is first listed, and only there
    by_name = {e.qualname: e for e in entries}
    assert by_name["sparsefs.list_methods"].is_canonical
    assert by_name["sparsefs.utils.list_methods"].canonical == "sparsefs.list_methods"
    objects = {}
    for e in entries:
        if e.is_canonical and e.kind != "data":
            obj = getattr(importlib.import_module(e.module), e.name)
            assert id(obj) not in objects, (e.qualname, objects.get(id(obj)))
            objects[id(obj)] = e.qualname
    kinds = {e.qualname: e.kind for e in entries}
    assert kinds["sparsefs.selection.FisherScore"] == "class"
    assert kinds["sparsefs.selection.fisher_score"] == "function"
    assert kinds["sparsefs.datasets.ChecksumError"] == "exception"
    assert kinds["sparsefs.harness.TIE_DECIMALS"] == "data"


def test_every_public_name_has_a_docstring():
    assert missing_docstrings() == []


def test_missing_docstrings_are_found(tmp_path, monkeypatch):
    """The check can fail: a class without a docstring and an undocumented constant."""
    pkg = tmp_path / "toypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        '__all__ = ["Good", "Bare", "LIMIT", "NOTE"]\n'
        "class Good:\n    '''Documented.'''\n"
        "class Bare(Good):\n    pass\n"
        "LIMIT = 3\n"
        "#: A documented constant.\nNOTE = 'x'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from sitebuild._api import PublicName

    entries = [PublicName("toypkg", n, k, f"toypkg.{n}")
               for n, k in [("Good", "class"), ("Bare", "class"), ("LIMIT", "data"),
                            ("NOTE", "data")]]
    assert missing_docstrings(entries) == ["toypkg.Bare", "toypkg.LIMIT"]


def test_attribute_docs_reads_both_forms(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('#: one\n#: two\nA = 1\nB: int = 2\n"""after B."""\nC = 3\n')
    assert attribute_docs(path) == {"A": "one\ntwo", "B": "after B."}


def test_api_pages_one_per_name_rewritten_only_when_changed(tmp_path):
    entries = write_api_pages(tmp_path)
    pages = {p.stem for p in (tmp_path / "generated").glob("*.rst")}
    expected = {e.qualname for e in entries if e.is_canonical and e.kind != "data"}
    assert pages == expected
    for modname in public_modules():
        text = (tmp_path / f"{modname}.rst").read_text()
        assert f".. automodule:: {modname}" in text
    fisher = (tmp_path / "generated" / "sparsefs.selection.FisherScore.rst").read_text()
    assert ".. autoclass:: FisherScore" in fisher and ":members:" in fisher
    assert ".. minigallery:: sparsefs.selection.FisherScore" in fisher
    index = (tmp_path / "index.rst").read_text()
    assert all(f":mod:`{m}`" in index for m in public_modules())
    # unchanged pages keep their time stamp (Sphinx then reuses its cached page); a page of a
    # name that is no longer public goes
    stamp = (tmp_path / "index.rst").stat().st_mtime_ns
    stale = tmp_path / "generated" / "sparsefs.selection.Gone.rst"
    stale.write_text("x")
    write_api_pages(tmp_path)
    assert (tmp_path / "index.rst").stat().st_mtime_ns == stamp
    assert not stale.exists()


def test_attribute_names_are_quoted_in_types_only():
    lines = ["    weights_ : ndarray of shape (n_features_in_,)",
             "    X : array-like of shape (n_samples, n_features)",
             "        ndarray of int, shape (n_features_per_class_,)",
             "    The fitted scores_ stay as they are in prose.",
             "    ready : ``n_iter_`` already quoted"]
    literal_attribute_names(lines)
    assert lines == ["    weights_ : ndarray of shape (``n_features_in_``,)",
                     "    X : array-like of shape (n_samples, n_features)",
                     "        ndarray of int, shape (``n_features_per_class_``,)",
                     "    The fitted scores_ stay as they are in prose.",
                     "    ready : ``n_iter_`` already quoted"]


def test_citations_opening_with_an_initial_stay_names():
    lines = ["    .. [1] K. Kira and L. A. Rendell, ICML 1992.",
             "    .. [2] Kononenko, ECML 1994.",
             "    A. sentence in prose stays."]
    escape_citation_initials(lines)
    assert lines == ["    .. [1] K\\. Kira and L. A. Rendell, ICML 1992.",
                     "    .. [2] Kononenko, ECML 1994.",
                     "    A. sentence in prose stays."]


def test_site_methods_table_is_the_registrys_with_links():
    table = methods_table("methods/index", DOCS).splitlines()
    source = methods_markdown().splitlines()
    assert len(table) == len(source) == len(list_methods()) + 2
    assert table[:2] == source[:2]
    for row, src, m in zip(table[2:], source[2:], list_methods()):
        module = m.import_path.split(":")[0]
        assert f"{{py:class}}`~{module}.{m.name}`" in row
        assert row.split(" | ", 2)[2] == src.split(" | ", 2)[2]  # the rest, unchanged
        if (DOCS / "methods" / f"{m.stem}.md").is_file():
            assert f"[`{m.stem}`]({m.stem}.md)" in row
    # from another folder the links are relative to that page
    assert "(methods/fisher_score.md)" in methods_table("index", DOCS)


def test_gallery_order_lists_existing_examples():
    examples = {p.name for p in (REPO / "examples").glob("plot_*.py")}
    assert set(GALLERY_ORDER) <= examples
    assert 8 <= len(examples) <= 12
    ordered = sorted(examples, key=gallery_sort_key)
    assert ordered[: len(GALLERY_ORDER)] == list(GALLERY_ORDER)
    assert gallery_sort_key("plot_zzz_new.py") > gallery_sort_key(GALLERY_ORDER[-1])


def _read_inventory(path):
    """A Sphinx version-2 inventory, parsed by hand: name -> (role, uri)."""
    raw = path.read_bytes()
    header, _, body = raw.partition(b"# The remainder of this file is compressed using zlib.\n")
    assert header.startswith(b"# Sphinx inventory version 2\n")
    out = {}
    for line in zlib.decompress(body).decode().splitlines():
        name, role, prio, uri, disp = line.rsplit(" ", 4)  # a term's name may hold spaces
        assert prio == "-1" and disp == "-" and ":" in role
        out[name] = (role, uri)
    return out


@pytest.mark.parametrize("project,name,role", [
    ("numpy", "numpy.ndarray", "py:class"),
    ("numpy", "array_like", "std:term"),
    ("scipy", "scipy.sparse.csr_matrix", "py:class"),
    ("sklearn", "sklearn.pipeline.Pipeline", "py:class"),
    ("sklearn", "sklearn.feature_selection.f_classif", "py:function"),
    ("sklearn", "meta-estimator", "std:term"),
    ("sklearn", "metadata_routing", "std:label"),
    ("pandas", "pandas.DataFrame", "py:class"),
    ("anndata", "anndata.AnnData", "py:class"),
    ("python", "ValueError", "py:exception"),
    ("python", "sequence", "std:term"),
    ("matplotlib", "matplotlib.axes.Axes", "py:class"),
    ("dask", "dask.array.Array", "py:class"),
])
def test_shipped_inventories_list_the_names_the_docstrings_use(project, name, role):
    inv = _read_inventory(DOCS / "_inventories" / f"{project}.inv")
    assert inv[name][0] == role
    uri = inv[name][1]
    assert "://" not in uri  # relative to the project's base URL in conf.py
    if role.startswith("py:"):
        assert uri.endswith(f"#{name}")


def test_server_injects_the_probe_only_when_asked_and_logs_missing_files(tmp_path):
    (tmp_path / "page.html").write_text("<html><body><p>hi</p></body></html>")
    with _Server(tmp_path) as server:
        plain = urllib.request.urlopen(server.base + "page.html").read().decode()
        probed = urllib.request.urlopen(_with_mark(server.base + "page.html")).read().decode()
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(server.base + "missing.png")
    assert "sparsefs-check" not in plain
    assert "sparsefs-check" in probed and probed.index("<script>") < probed.index("</body>")
    assert ("/missing.png", 404) in [(p, int(c)) for p, c in server.log]
    assert _PROBE.count("<script>") == 1


def test_problems_name_what_is_wrong():
    good = {"images": 2, "broken_images": [], "math": 3, "math_typeset": 3, "math_errors": 0,
            "external": [], "search_hits": 4}
    assert _problems("x", {"images": 1, "math": 1, "search": 1}, good, []) == []
    assert _problems("x", {}, {}, []) == [
        "the page did not finish loading (no report from the probe)"]
    bad = dict(good, broken_images=["a.png"], math_typeset=1,
               external=["https://cdn.example/x.js"], search_hits=0)
    found = " | ".join(_problems("x", {"search": 1}, bad, ["/_static/y.css"]))
    for text in ["a.png", "math not typeset: 1 of 3", "cdn.example", "search found nothing",
                 "/_static/y.css"]:
        assert text in found


def test_browser_pages_exist_in_the_sources():
    """Each page the browser check renders comes from a source file of the site (or from
    the gallery, the API reference or the search page, which every build writes)."""
    for path, _ in PAGES.values():
        stem = path.split("?")[0].removesuffix(".html")
        if stem.startswith(("auto_examples/", "api/")) or stem == "search":
            continue
        assert (DOCS / f"{stem}.md").is_file(), stem
    example = PAGES["example"][0].split("/")[-1].removesuffix(".html") + ".py"
    assert (REPO / "examples" / example).is_file()
    api = PAGES["api"][0].split("/")[-1].removesuffix(".html")
    module, _, name = api.rpartition(".")
    assert name in importlib.import_module(module).__all__


def test_docs_build_module_has_no_sphinx_import_at_load():
    """``import sitebuild`` works without the docs extra (the test suite imports it)."""
    for mod in ["_api", "_browser", "_build", "_record", "_inventories", "_sphinx_ext"]:
        src = inspect.getsource(importlib.import_module(f"sitebuild.{mod}"))
        top = [ln for ln in src.splitlines() if ln.startswith(("import ", "from "))]
        assert not [ln for ln in top if "sphinx" in ln.split()[1] or "PIL" in ln], mod
