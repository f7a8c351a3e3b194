"""The API reference, generated from the ``__all__`` of every public module.

Nothing here is written by hand per name: a module that gains a name in its ``__all__`` (or a new
public module with an ``__all__``) gets its pages at the next build. Each object is documented
once, under the first module (in :data:`MODULE_ORDER`, then alphabetically) that lists it; the
other modules that re-export it link to that page.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import sparsefs

#: The order of the API reference; public modules not named here follow, alphabetically.
MODULE_ORDER: tuple[str, ...] = (
    "sparsefs",
    "sparsefs.selection",
    "sparsefs.classification",
    "sparsefs.clustering",
    "sparsefs.metrics",
    "sparsefs.datasets",
    "sparsefs.plotting",
    "sparsefs.tl",
    "sparsefs.get",
    "sparsefs.harness",
    "sparsefs.utils",
    "sparsefs.base",
    "sparsefs.exceptions",
    "sparsefs.cli",
)

#: Public-looking modules left out of the reference, with the reason.
EXCLUDED: dict[str, str] = {
    "sparsefs.benchmark": "deprecated alias of sparsefs.harness (importing it warns)",
    "sparsefs.harness.hooks": "reproduction hooks named by configs/*.toml (docs/harness.md)",
}

Kind = Literal["class", "exception", "function", "data"]

#: Section titles on a module page, in page order.
SECTIONS: dict[str, str] = {
    "class": "Classes",
    "function": "Functions",
    "exception": "Exceptions and warnings",
    "data": "Constants",
}


@dataclass(frozen=True)
class PublicName:
    """One entry of a module's ``__all__``.

    Attributes
    ----------
    module : str
        The module whose ``__all__`` lists it.
    name : str
        The name in that module.
    kind : {"class", "exception", "function", "data"}
    canonical : str
        ``"module.name"`` of the page (or module-page entry) that documents the object: the
        first module that lists it.
    """

    module: str
    name: str
    kind: Kind
    canonical: str

    @property
    def qualname(self) -> str:
        """``"module.name"``."""
        return f"{self.module}.{self.name}"

    @property
    def is_canonical(self) -> bool:
        """Whether this entry is where the object is documented."""
        return self.canonical == self.qualname


def _defines_all(path: Path) -> bool:
    """Whether a module's source assigns ``__all__`` at top level (read, not imported)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return True
    return False


def _excluded(module: str) -> bool:
    return any(module == e or module.startswith(e + ".") for e in EXCLUDED)


def public_modules() -> list[str]:
    """The modules of the API reference, in page order.

    A module is public when no part of its dotted name starts with an underscore, it is not a
    test or ``__main__`` module, it is not in :data:`EXCLUDED`, and it defines ``__all__``.
    The source is read without importing it (so a deprecated alias does not warn).

    Returns
    -------
    list of str
        Dotted module names: :data:`MODULE_ORDER` first, then the others alphabetically.
    """
    root = Path(sparsefs.__file__).resolve().parent
    found = []
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(p.startswith("_") or p == "tests" for p in parts):
            continue
        name = ".".join(parts)
        if not _excluded(name) and _defines_all(path):
            found.append(name)
    rank = {m: i for i, m in enumerate(MODULE_ORDER)}
    return sorted(found, key=lambda m: (rank.get(m, len(rank)), m))


def _kind(obj: Any) -> Kind:
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if callable(obj):
        return "function"
    return "data"


def public_names(modules: list[str] | None = None) -> list[PublicName]:
    """Every name of every public module's ``__all__``, with where it is documented.

    Parameters
    ----------
    modules : list of str, optional
        Default :func:`public_modules`.

    Returns
    -------
    list of PublicName
        In module order, then in ``__all__`` order.
    """
    modules = public_modules() if modules is None else modules
    out: list[PublicName] = []
    first: dict[Any, str] = {}
    for modname in modules:
        module = importlib.import_module(modname)
        for name in module.__all__:
            obj = getattr(module, name)
            kind = _kind(obj)
            # a data value (an int, a string) is not identified by id() across modules
            key: Any = id(obj) if kind != "data" else (modname, name)
            canonical = first.setdefault(key, f"{modname}.{name}")
            out.append(PublicName(modname, name, kind, canonical))
    return out


def resolve(qualname: str) -> Any:
    """The object a ``"module.name"`` refers to."""
    modname, _, name = qualname.rpartition(".")
    return getattr(importlib.import_module(modname), name)


def attribute_docs(path: Path | str) -> dict[str, str]:
    """The documented module-level assignments of a source file: ``name -> text``.

    Both forms autodoc reads: a string literal right after the assignment, and ``#:``
    comment lines right before it.
    """
    source = Path(path).read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    docs: dict[str, str] = {}
    for i, node in enumerate(tree.body):
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        else:
            continue
        text = ""
        after = tree.body[i + 1] if i + 1 < len(tree.body) else None
        if (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            text = inspect.cleandoc(after.value.value)
        else:
            comments = []
            row = node.lineno - 2
            while row >= 0 and lines[row].lstrip().startswith("#:"):
                comments.insert(0, lines[row].lstrip()[2:].strip())
                row -= 1
            text = "\n".join(comments)
        for name in names:
            if text:
                docs[name] = text
    return docs


def data_docstring(entry: PublicName) -> str:
    """The documentation of a module-level constant: its ``#:`` comment or the string literal
    after its assignment, in the sparsefs module that assigns it (empty when it has none)."""
    module = importlib.import_module(entry.module)
    obj = getattr(module, entry.name)
    path = Path(module.__file__).resolve()
    candidates = [(path, entry.module)]
    if path.name == "__init__.py":  # assigned in one of the package's private modules
        candidates += [(c, f"{entry.module}.{c.stem}") for c in sorted(path.parent.glob("_*.py"))]
    # or re-exported from another module (``from sparsefs.metrics._summary import
    # TIE_DECIMALS``), possibly through a package that re-exports it in turn (``_spec``)
    seen = {c for c, _ in candidates}
    for candidate, _ in candidates:  # grows while it is read: follows re-export chains
        for node in ast.walk(ast.parse(candidate.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ImportFrom) and not node.level and node.module
                    and node.module.startswith("sparsefs.")
                    and any(a.name == entry.name for a in node.names)):
                source = importlib.import_module(node.module)
                found = Path(source.__file__).resolve()
                if found not in seen:
                    seen.add(found)
                    candidates.append((found, node.module))
    for candidate, modname in candidates:
        doc = attribute_docs(candidate).get(entry.name)
        if not doc:
            continue
        if candidate == path:
            return doc
        if getattr(importlib.import_module(modname), entry.name, None) is obj:
            return doc
    return ""


def _title(text: str, char: str = "=") -> str:
    return f"{text}\n{char * len(text)}\n"


def _first_line(doc: str | None) -> str:
    """The summary paragraph of a docstring, on one line."""
    para = inspect.cleandoc(doc or "").split("\n\n")[0]
    return " ".join(para.split())


def _value_repr(obj: Any, limit: int = 70) -> str:
    text = repr(obj)
    if isinstance(obj, dict):
        text = f"dict of {len(obj)} entries"
        return text
    return text if len(text) <= limit else text[: limit - 5] + " ...)"


def _name_page(entry: PublicName) -> str:
    directive = {"class": "autoclass", "exception": "autoexception",
                 "function": "autofunction"}[entry.kind]
    lines = [
        _title(entry.name),
        f".. currentmodule:: {entry.module}",
        "",
        f".. {directive}:: {entry.name}",
        *(["   :members:", "   :inherited-members:"] if entry.kind == "class" else []),
        "",
        f".. minigallery:: {entry.qualname}",
        f"   :add-heading: Examples using ``{entry.name}``",
        "",
    ]
    return "\n".join(lines)


def _module_page(modname: str, entries: list[PublicName]) -> str:
    lines = [_title(f"``{modname}``"), f".. automodule:: {modname}", "",
             f".. currentmodule:: {modname}", ""]
    for kind, heading in SECTIONS.items():
        group = [e for e in entries if e.kind == kind]
        if not group:
            continue
        lines += [_title(heading, "-")]
        if kind == "data":
            for e in group:
                value = _value_repr(resolve(e.qualname))
                lines += [f".. py:data:: {e.name}", f"   :value: {value}", ""]
                doc = data_docstring(e)
                lines += ["   " + ln if ln else "" for ln in doc.splitlines()] + [""]
            continue
        own = [e for e in group if e.is_canonical]
        other = [e for e in group if not e.is_canonical]
        if own:
            lines += [".. autosummary::", "   :nosignatures:", "   :toctree: generated/", ""]
            lines += [f"   {e.name}" for e in own] + [""]
        if other:
            lines += ["Also here, documented where they are defined:", "",
                      ".. autosummary::", "   :nosignatures:", ""]
            lines += [f"   ~{e.canonical}" for e in other] + [""]
    return "\n".join(lines)


def _index_page(modules: list[str], entries: list[PublicName]) -> str:
    lines = [
        ".. _api:",
        "",
        _title("API reference"),
        "Every public class, function and constant of sparsefs, one module at a time. The pages "
        "are generated from the ``__all__`` of each module and the numpydoc docstrings, at every "
        "build (see :doc:`/building`).",
        "",
        ".. toctree::",
        "   :hidden:",
        "",
    ]
    lines += [f"   {m}" for m in modules] + [""]
    for modname in modules:
        module = importlib.import_module(modname)
        lines += [_title(f":mod:`{modname}`", "-"), _first_line(module.__doc__), ""]
        mine = [e for e in entries if e.module == modname and e.kind != "data"]
        if mine:
            lines += [".. autosummary::", "   :nosignatures:", ""]
            lines += [f"   ~{e.canonical}" for e in mine] + [""]
        data = [e for e in entries if e.module == modname and e.kind == "data"]
        if data:
            names = ", ".join(f":data:`~{e.canonical}`" for e in data)
            lines += [f"Constants: {names}.", ""]
    return "\n".join(lines)


def _write(path: Path, text: str) -> bool:
    """Write ``text`` unless the file already holds it (Sphinx then keeps its cached page)."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def write_api_pages(outdir: Path | str) -> list[PublicName]:
    """Write the reStructuredText sources of the API reference into ``outdir``.

    ``outdir/index.rst`` (every module with a summary table), ``outdir/<module>.rst`` (the
    module's docstring and its names by kind) and ``outdir/generated/<module>.<name>.rst`` (one
    page per class, exception and function). Files whose content is unchanged are not
    rewritten, and pages of names no longer public are removed.

    Parameters
    ----------
    outdir : path
        Folder inside the Sphinx source folder (``docs/api``).

    Returns
    -------
    list of PublicName
        Every entry written.
    """
    outdir = Path(outdir)
    modules = public_modules()
    entries = public_names(modules)
    keep = {outdir / "index.rst"}
    _write(outdir / "index.rst", _index_page(modules, entries))
    for modname in modules:
        page = outdir / f"{modname}.rst"
        keep.add(page)
        _write(page, _module_page(modname, [e for e in entries if e.module == modname]))
    for e in entries:
        if e.is_canonical and e.kind != "data":
            page = outdir / "generated" / f"{e.qualname}.rst"
            keep.add(page)
            _write(page, _name_page(e))
    for stale in [*outdir.glob("*.rst"), *(outdir / "generated").glob("*.rst")]:
        if stale not in keep:
            stale.unlink()
    return entries


def missing_docstrings(entries: list[PublicName] | None = None) -> list[str]:
    """The public names documented nowhere: a class or function without a docstring, or a
    constant without a ``#:`` comment or docstring where it is assigned.

    Returns
    -------
    list of str
        ``"module.name"`` of each, in page order.
    """
    entries = public_names() if entries is None else entries
    missing = []
    for e in entries:
        if not e.is_canonical:
            continue
        if e.kind == "data":
            doc = data_docstring(e)
        else:
            # the object's own docstring: inspect.getdoc would inherit a base class's
            doc = getattr(resolve(e.qualname), "__doc__", None) or ""
        if not doc.strip():
            missing.append(e.qualname)
    return missing
