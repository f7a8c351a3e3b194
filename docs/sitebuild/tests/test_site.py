"""The documentation site, built and looked at (slow: ``python -m pytest -m slow``).

One fresh build of the whole site with ``-W`` (a warning, a broken reference, a failed example
or a public name without documentation fails it), then checks of what it wrote, then the
browser check in headless Chromium (skipped when Chromium is absent). Small Sphinx projects
show that each kind of failure does fail a build.
"""

import importlib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import sparsefs
from sitebuild._api import public_names
from sparsefs.utils import list_methods

pytestmark = pytest.mark.slow

for _mod in ["sphinx", "pydata_sphinx_theme", "numpydoc", "myst_parser", "sphinx_gallery"]:
    pytest.importorskip(_mod, reason='the docs extra: pip install -e ".[docs]"')

REPO = Path(sparsefs.__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from sitebuild import build

    out = tmp_path_factory.mktemp("site") / "html"
    result = build(out, fresh=True, capture=True)
    log = (out.parent / "build.log").read_text(encoding="utf-8")
    assert result.returncode == 0, f"the build failed ({result.seconds:.0f} s):\n{log[-6000:]}"
    return out


def test_every_public_name_has_an_api_page(site):
    for e in public_names():
        if not e.is_canonical:
            continue
        if e.kind == "data":
            page = site / "api" / f"{e.module}.html"
        else:
            page = site / "api" / "generated" / f"{e.qualname}.html"
        assert page.is_file(), e.qualname
        assert f'id="{e.qualname}"' in page.read_text(encoding="utf-8"), e.qualname


def test_parameters_and_attributes_are_on_the_class_page(site):
    page = (site / "api/generated/sparsefs.selection.StabilitySelector.html").read_text()
    cls = importlib.import_module("sparsefs.selection").StabilitySelector
    for name in cls().get_params():
        assert f"<strong>{name}</strong>" in page, name
    for attr in ["frequencies_", "threshold_", "stability_index_"]:
        assert f"<strong>{attr}</strong>" in page, attr
    assert 'id="sparsefs.selection.StabilitySelector.fit"' in page
    # cross-links: the base estimator's page and scikit-learn's
    assert 'href="sparsefs.selection.LassoSelector.html' in page
    assert "scikit-learn.org/stable/" in page


def test_every_example_ran_and_drew(site):
    examples = sorted((REPO / "examples").glob("plot_*.py"))
    assert 8 <= len(examples) <= 12
    index = (site / "auto_examples" / "index.html").read_text(encoding="utf-8")
    assert "broken_example" not in index
    for ex in examples:
        page = site / "auto_examples" / f"{ex.stem}.html"
        assert page.is_file(), ex.name
        figures = re.findall(rf'src="../_images/(sphx_glr_{ex.stem}_\d+\.png)"', page.read_text())
        assert figures, f"{ex.name} drew no figure"
        assert all((site / "_images" / f).is_file() for f in figures)


def test_methods_table_has_every_registered_method(site):
    page = (site / "methods" / "index.html").read_text(encoding="utf-8")
    table = page[page.index("sparsefs-methods-table"):]
    for m in list_methods():
        module = m.import_path.split(":")[0]
        assert f'href="../api/generated/{module}.{m.name}.html' in table, m.stem


def test_math_is_served_by_the_site_and_nothing_from_other_hosts(site):
    assert (site / "_static" / "tex-svg-full.js").stat().st_size > 1_000_000
    api = (site / "api/generated/sparsefs.selection.FisherScore.html").read_text()
    assert 'src="../../_static/tex-svg-full.js' in api
    remote = re.compile(r'<(?:script|img|iframe)[^>]+src="(?:https?:)?//|'
                        r'<link[^>]+rel="stylesheet"[^>]+href="(?:https?:)?//')
    for page in site.rglob("*.html"):
        assert not remote.search(page.read_text(encoding="utf-8")), page


def test_search_index_is_written(site):
    index = (site / "searchindex.js").read_text(encoding="utf-8")
    assert "StabilitySelector" in index and "fisher_score" in index


def test_browser_check_passes(site, tmp_path):
    from sitebuild import check_site, find_chromium

    if find_chromium() is None:
        pytest.skip("no chromium on the PATH (Debian: apt-get install chromium)")
    results = check_site(site, tmp_path)
    for c in results:
        assert c.ok, (c.name, c.problems, c.report)
        assert c.screenshot is not None and c.screenshot.stat().st_size > 20_000
    report = {c.name: c.report for c in results}
    assert report["api"]["math_typeset"] >= 10
    assert report["example"]["images"] >= 1
    assert report["search"]["search_hits"] >= 1


def _sphinx(src, out):
    path = os.pathsep.join([str(REPO), str(REPO / "docs")])  # sparsefs, and sitebuild
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "-q", str(src),
                           str(out)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": path, "MPLBACKEND": "Agg"})


def test_broken_references_fail_the_build(tmp_path):
    """A mistyped sparsefs name fails the build, a name from a package without an inventory
    entry does not, and neither does a reference into a private module; a Markdown link to a
    missing page fails it too. (The site's conf.py uses the same settings.)"""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(textwrap.dedent("""
        from sitebuild._sphinx_ext import NITPICK_IGNORE_REGEX
        extensions = ["sphinx.ext.autodoc", "myst_parser"]
        nitpicky = True
        nitpick_ignore_regex = NITPICK_IGNORE_REGEX
    """))
    good = textwrap.dedent("""
        Test
        ====

        .. toctree::

           page

        .. autofunction:: sparsefs.selection.fisher_score

        See :func:`sparsefs.selection.fisher_score`, :class:`numpy.NotInAnInventory` and
        :mod:`sparsefs._kernels.stats`.
    """)
    (src / "index.rst").write_text(good)
    (src / "page.md").write_text("# Page\n\n[back](index.rst)\n")
    ok = _sphinx(src, tmp_path / "a")
    assert ok.returncode == 0, ok.stderr
    (src / "index.rst").write_text(good + "\nAnd :class:`sparsefs.selection.NoSuchSelector`.\n")
    bad = _sphinx(src, tmp_path / "b")
    assert bad.returncode != 0 and "sparsefs.selection.NoSuchSelector" in bad.stderr
    (src / "index.rst").write_text(good)
    (src / "page.md").write_text("# Page\n\n[gone](nowhere.md)\n")
    bad = _sphinx(src, tmp_path / "c")
    assert bad.returncode != 0 and "nowhere.md" in bad.stderr


def test_a_failing_example_fails_the_build(tmp_path):
    src = tmp_path / "src"
    (src / "examples").mkdir(parents=True)
    (src / "conf.py").write_text(textwrap.dedent("""
        extensions = ["sphinx_gallery.gen_gallery"]
        sphinx_gallery_conf = {"examples_dirs": "examples", "gallery_dirs": "auto_examples",
                               "filename_pattern": "/plot_", "download_all_examples": False}
    """))
    (src / "index.rst").write_text("Test\n====\n\n.. toctree::\n\n   auto_examples/index\n")
    (src / "examples" / "README.txt").write_text("Examples\n========\n")
    (src / "examples" / "plot_fails.py").write_text(
        '"""\nFails\n=====\n\nRaises.\n"""\nraise RuntimeError("this example is broken")\n')
    run = _sphinx(src, tmp_path / "out")
    assert run.returncode != 0
    assert "this example is broken" in run.stdout + run.stderr


def test_browser_check_reports_a_broken_page(tmp_path):
    from sitebuild import check_site, find_chromium

    if find_chromium() is None:
        pytest.skip("no chromium on the PATH (Debian: apt-get install chromium)")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html><body><h1>ok</h1></body></html>")
    (site / "bad.html").write_text(
        '<html><body><h1>bad</h1><img src="missing.png">'
        '<span class="math">\\(x^2\\)</span></body></html>')
    results = check_site(site, tmp_path / "shots",
                         pages={"index": ("index.html", {}), "bad": ("bad.html", {"math": 1})})
    ok, bad = results
    assert ok.ok, ok.problems
    text = " | ".join(bad.problems)
    assert "missing.png" in text and "math not typeset: 0 of 1" in text
    assert "/missing.png" in bad.missing
