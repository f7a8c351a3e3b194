"""The Sphinx extension behind the site (``docs/conf.py`` loads it).

It writes the API reference from ``__all__`` before Sphinx reads the sources, fails the build
(a warning under ``-W``) on a public name without documentation, renders the registry's
methods table (the generator of the README's table), serves MathJax from the site itself,
links a page's relative link to a repository file to that file on the code host, and gives
``[source]`` links (``sphinx.ext.linkcode``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import posixpath
import re
from pathlib import Path
from typing import Any

import sparsefs
from sparsefs.docs._api import missing_docstrings, write_api_pages
from sparsefs.utils._registry import methods_markdown

#: Where "[source]" links and links to repository files point.
CODE_HOST = "https://github.com/sparsefs/sparsefs/blob/main/"

#: The MathJax 3 bundle served from the site: every TeX extension, SVG output (fonts inside,
#: nothing fetched at view time). Shipped by the ``sphinx-mathjax-offline`` package.
MATHJAX_FILE = "sphinx-mathjax-offline/static/mathjax/tex-svg-full.js"

REPO = Path(sparsefs.__file__).resolve().parent.parent


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


def _on_process_docstring(app: Any, what: str, name: str, obj: Any, options: Any,
                          lines: list[str]) -> None:
    literal_attribute_names(lines)


_ROW = re.compile(r"^\| `(?P<stem>[^`]+)` \| `(?P<est>[^`]+)` \|")


def methods_table(docname: str, srcdir: Path) -> str:
    """:func:`~sparsefs.utils._registry.methods_markdown` with links for the site: each stem to
    its page ``methods/<stem>.md`` (when there is one), each estimator to its API page.

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
            line = f"| {cell} | {{py:class}}`{est}` |" + line[m.end():]
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
            container = nodes.container(classes=["sparsefs-methods-table"])
            self.state.nested_parse(StringList(text.splitlines()), self.content_offset,
                                    container)
            return [container]

    return MethodsTable


def _on_missing_reference(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """A Markdown link to a repository file outside the site (``../sparsefs/base.py``) goes to
    that file on the code host, so the link works both there and on the site."""
    from docutils import nodes

    if node.get("reftype") != "myst" or node.get("refdomain"):
        return None
    target = node.get("reftarget", "")
    if not target or "://" in target:
        return None
    path, _, anchor = target.partition("#")
    source = Path(env.doc2path(node["refdoc"])).parent
    full = (source / path).resolve()
    try:
        rel = full.relative_to(REPO)
    except ValueError:
        return None
    if not full.exists():
        return None
    url = CODE_HOST.replace("/blob/", "/tree/") if full.is_dir() else CODE_HOST
    ref = nodes.reference("", "", internal=False,
                          refuri=url + rel.as_posix() + (f"#{anchor}" if anchor else ""))
    ref += contnode
    return ref


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
    app.connect("missing-reference", _on_missing_reference)
    # before numpydoc turns the sections into reStructuredText (priority 500)
    app.connect("autodoc-process-docstring", _on_process_docstring, priority=400)
    app.add_directive("sparsefs-methods-table", _methods_table_directive())
    return {"version": sparsefs.__version__, "parallel_read_safe": True,
            "parallel_write_safe": True}
