"""The Sphinx extension behind the site (``docs/conf.py`` loads it).

It writes the API reference from ``__all__`` before Sphinx reads the sources, fails the build
(a warning under ``-W``) on a public name without documentation, renders the registry's
methods table (the generator of the README's table), serves MathJax from the site itself,
sends a page's relative link to a repository file outside ``docs/`` to that file on the code
host, quotes fitted-attribute names in numpydoc types, and gives ``[source]`` links
(``sphinx.ext.linkcode``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import posixpath
import re
import sys
from pathlib import Path
from typing import Any

import sparsefs
from sparsefs.utils._registry import methods_markdown

from ._api import missing_docstrings, write_api_pages

#: ``nitpick_ignore_regex`` of the site: a cross-reference that does not resolve fails the
#: build (``-W``) when it names a public sparsefs object; one to another package that the
#: shipped inventories do not list, or to a private sparsefs module, stays plain text.
NITPICK_IGNORE_REGEX: list[tuple[str, str]] = [
    (r"py:.*", r"(?!sparsefs\b).*"),
    (r"py:.*", r"sparsefs(\.\w+)*\._.*"),
]

#: Where "[source]" links and links to repository files point.
CODE_HOST = "https://github.com/sparsefs/sparsefs/blob/main/"

#: The MathJax 3 bundle served from the site: every TeX extension, SVG output (fonts inside,
#: nothing fetched at view time). Shipped by the ``sphinx-mathjax-offline`` package.
MATHJAX_FILE = "sphinx-mathjax-offline/static/mathjax/tex-svg-full.js"

REPO = Path(__file__).resolve().parents[2]  # the checkout that holds docs/sitebuild

#: The gallery's order (``examples/``); an example not listed follows, by file name.
GALLERY_ORDER: tuple[str, ...] = (
    "plot_microarray_genes.py",
    "plot_pipeline_gridsearch.py",
    "plot_stability_selection.py",
    "plot_fdr_selection.py",
    "plot_sparse_centers.py",
    "plot_unsupervised_selectors.py",
    "plot_l0_kmeans.py",
    "plot_single_cell_markers.py",
    "plot_dask_out_of_core.py",
    "plot_compare_methods.py",
)


def gallery_sort_key(filename: str) -> tuple[int, str]:
    """The sort key of a gallery example (sphinx-gallery's ``within_subsection_order``)."""
    name = Path(filename).name
    rank = GALLERY_ORDER.index(name) if name in GALLERY_ORDER else len(GALLERY_ORDER)
    return rank, name


def mathjax_bundle() -> Path:
    """The local MathJax bundle.

    Raises
    ------
    RuntimeError
        When ``sphinx-mathjax-offline`` is not installed (``pip install -e ".[docs]"``).
    """
    try:
        dist = importlib.metadata.distribution("sphinx-mathjax-offline")
    except importlib.metadata.PackageNotFoundError:
        dist = None
    path = Path(dist.locate_file(MATHJAX_FILE)) if dist is not None else None
    if path is None or not path.is_file():
        raise RuntimeError("the docs serve MathJax locally from the sphinx-mathjax-offline "
                           "package: pip install -e '.[docs]'")
    return path


def _on_config_inited(app: Any, config: Any) -> None:
    bundle = mathjax_bundle()
    config.html_static_path = [*config.html_static_path, str(bundle)]
    config.mathjax_path = bundle.name


def _on_builder_inited(app: Any) -> None:
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    entries = write_api_pages(Path(app.srcdir) / "api")
    for qualname in missing_docstrings(entries):
        logger.warning("public name %s has no docstring (it is in its module's __all__)",
                       qualname, type="sparsefs", subtype="docstring")


#: A numpydoc "name : type" line (parameters, attributes, returns).
_PARAM_LINE = re.compile(r"^(?P<head>\s*[\w*][\w*, ]* : )(?P<type>.+)$")
#: An identifier ending in an underscore (a fitted attribute) inside a type.
_TRAILING_UNDERSCORE = re.compile(r"(?<![`\w])([A-Za-z]\w*_)(?![`\w])")
#: ``shape (...)`` anywhere (a type-only line under Returns, prose).
_SHAPE = re.compile(r"shape \(([^()]*)\)")


def literal_attribute_names(lines: list[str]) -> None:
    """Quote fitted-attribute names in numpydoc types, in place.

    ``ndarray of shape (n_features_in_,)`` is plain text to a reader, but reStructuredText
    reads ``n_features_in_`` as a link to a target of that name (and fails). scikit-learn's
    docstrings quote it; here it is quoted when the page is built, so the docstrings read
    the same in the source and in ``help()``.
    """
    def quote(text: str) -> str:
        return _TRAILING_UNDERSCORE.sub(r"``\1``", text)

    for i, line in enumerate(lines):
        m = _PARAM_LINE.match(line)
        if m and "_" in m["type"]:
            line = m["head"] + quote(m["type"])
        else:
            line = _SHAPE.sub(lambda s: f"shape ({quote(s[1])})", line)
        lines[i] = line


#: A citation whose text starts with an initial: ``.. [1] K. Kira and ...``.
_CITATION_INITIAL = re.compile(r"^(\s*\.\. \[[^\]]+\]\s+[A-Z])\. ")


def escape_citation_initials(lines: list[str]) -> None:
    """Escape the period after an author's initial that opens a reference, in place.

    reStructuredText reads a one-line ``.. [1] K. Kira and L. A. Rendell, ...`` as a list
    item numbered "K" (the page showed "11. Kira and ..."); ``K\\.`` keeps it a name.
    """
    for i, line in enumerate(lines):
        lines[i] = _CITATION_INITIAL.sub(r"\1\\. ", line)


def _on_process_docstring(app: Any, what: str, name: str, obj: Any, options: Any,
                          lines: list[str]) -> None:
    literal_attribute_names(lines)
    escape_citation_initials(lines)


_ROW = re.compile(r"^\| `(?P<stem>[^`]+)` \| `(?P<est>[^`]+)` \|")


def methods_table(docname: str, srcdir: Path) -> str:
    """:func:`~sparsefs.utils._registry.methods_markdown` with links for the site: each stem to
    its page ``methods/<stem>.md`` (when there is one), each estimator to its API page (shown
    by its class name, the module being in the link).

    Parameters
    ----------
    docname : str
        The page that shows the table (links are relative to it).
    srcdir : path
        The Sphinx source folder.

    Returns
    -------
    str
        The Markdown table.
    """
    here = posixpath.dirname(docname)
    out = []
    for line in methods_markdown().splitlines():
        m = _ROW.match(line)
        if m:
            stem, est = m["stem"], m["est"]
            cell = f"`{stem}`"
            if (Path(srcdir) / "methods" / f"{stem}.md").is_file():
                cell = f"[`{stem}`]({posixpath.relpath(f'methods/{stem}.md', here or '.')})"
            line = f"| {cell} | {{py:class}}`~{est}` |" + line[m.end():]
        out.append(line)
    return "\n".join(out)


def _methods_table_directive() -> type:
    from docutils import nodes
    from docutils.statemachine import StringList
    from sphinx.util.docutils import SphinxDirective

    class MethodsTable(SphinxDirective):
        """``{sparsefs-methods-table}``: the registry's methods table (Markdown pages only)."""

        has_content = False

        def run(self) -> list[Any]:
            text = methods_table(self.env.docname, Path(self.env.srcdir))
            # the page is re-read when the registry (or this rendering of it) changes
            registry = importlib.import_module("sparsefs.utils._registry")
            for module in (registry, sys.modules[__name__]):
                self.env.note_dependency(str(Path(module.__file__).resolve()))
            container = nodes.container(classes=["sparsefs-methods-table"])
            self.state.nested_parse(StringList(text.splitlines()), self.content_offset,
                                    container)
            return [container]

    return MethodsTable


def code_host_url(path: Path | str) -> str | None:
    """The code-host address of a repository file or folder, or None outside the checkout."""
    full = Path(path).resolve()
    try:
        rel = full.relative_to(REPO)
    except ValueError:
        return None
    url = CODE_HOST.replace("/blob/", "/tree/") if full.is_dir() else CODE_HOST
    return url + rel.as_posix()


def _on_doctree_read(app: Any, doctree: Any) -> None:
    """A Markdown link to a repository file or folder outside the site
    (``[benchmarks](../benchmarks/README.md)``) goes to it on the code host, as it does when
    the page is read there (MyST would offer a file as a download, and fail on a folder)."""
    from docutils import nodes
    from sphinx import addnodes

    srcdir = Path(app.srcdir).resolve()
    candidates = [*doctree.findall(addnodes.pending_xref),
                  *doctree.findall(addnodes.download_reference)]
    for node in candidates:
        if node.get("reftype") != "myst" or node.get("refdomain") not in (None, ""):
            continue
        path, _, anchor = node.get("reftarget", "").partition("#")
        if not path or "://" in path:
            continue
        full = (Path(app.env.doc2path(node["refdoc"])).parent / path).resolve()
        if not full.exists() or full.is_relative_to(srcdir):
            continue
        url = code_host_url(full)
        if url is None:
            continue
        ref = nodes.reference("", "", *node.children, internal=False,
                              refuri=url + (f"#{anchor}" if anchor else ""))
        node.replace_self(ref)


def linkcode_resolve(domain: str, info: dict[str, str]) -> str | None:
    """The code-host URL of a documented Python object's source (``sphinx.ext.linkcode``)."""
    if domain != "py" or not info.get("module"):
        return None
    try:
        obj: Any = importlib.import_module(info["module"])
        for part in info["fullname"].split("."):
            obj = getattr(obj, part)
        obj = inspect.unwrap(obj)
        if isinstance(obj, property):
            obj = obj.fget
        path = Path(inspect.getsourcefile(obj) or "").resolve()
        lines, start = inspect.getsourcelines(obj)
    except (AttributeError, ImportError, OSError, TypeError):
        return None
    try:
        rel = path.relative_to(REPO)
    except ValueError:  # defined outside sparsefs (a re-exported scikit-learn class)
        return None
    return f"{CODE_HOST}{rel.as_posix()}#L{start}-L{start + len(lines) - 1}"


def setup(app: Any) -> dict[str, Any]:
    """Register the extension's events and directive."""
    app.connect("config-inited", _on_config_inited)
    # before sphinx.ext.autosummary reads the pages written here (priority 500)
    app.connect("builder-inited", _on_builder_inited, priority=100)
    app.connect("doctree-read", _on_doctree_read)
    # before numpydoc turns the sections into reStructuredText (priority 500)
    app.connect("autodoc-process-docstring", _on_process_docstring, priority=400)
    app.add_directive("sparsefs-methods-table", _methods_table_directive())
    return {"version": sparsefs.__version__, "parallel_read_safe": True,
            "parallel_write_safe": True}
