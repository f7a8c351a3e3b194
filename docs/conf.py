"""Sphinx configuration of the sparsefs documentation site.

Build: ``python -m docs.sitebuild`` (see building.md). Everything is local: no page, example or
inventory is fetched from the network at build or view time.
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the checkout's sparsefs, also when the docs are built without installing it, and the site's
# own tooling (docs/sitebuild: the API pages, the Sphinx extension, the inventories)
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from sitebuild._inventories import BASE_URLS  # noqa: E402
from sitebuild._sphinx_ext import (  # noqa: E402, F401
    NITPICK_IGNORE_REGEX,
    gallery_sort_key,
    linkcode_resolve,
)
from sphinx_gallery.sorting import FunctionSortKey  # noqa: E402

import sparsefs  # noqa: E402

os.environ.setdefault("MPLBACKEND", "Agg")

project = "sparsefs"
author = "The sparsefs developers"
copyright = "The sparsefs developers, BSD-3-Clause"
version = release = sparsefs.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.linkcode",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "sitebuild._sphinx_ext",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "**/.ipynb_checkpoints",
    "examples",  # docs/examples/*.py: scripts that write the figures of a page
    "reproductions/*/notes.md",  # merged into the reproduction pages by `sparsefs reproduce`
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.json",
]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["sparsefs.css"]

# -- the pages: Markdown as the code host shows it -------------------------------------------
myst_heading_anchors = 3  # [text](page.md#a-heading) as on the code host

# -- API reference ----------------------------------------------------------------------------
autosummary_generate = False  # the pages are written from __all__ by docs/sitebuild
autodoc_typehints = "none"  # the numpydoc sections give the types
autodoc_member_order = "groupwise"
numpydoc_show_class_members = True
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = True
numpydoc_xref_aliases = {
    "ndarray": "numpy.ndarray",
    "array-like": ":term:`array-like <array_like>`",
    "array_like": ":term:`array_like`",
    "sparse matrix": "scipy.sparse.spmatrix",
    "DataFrame": "pandas.DataFrame",
    "Series": "pandas.Series",
    "AnnData": "anndata.AnnData",
    "Axes": "matplotlib.axes.Axes",
    "Figure": "matplotlib.figure.Figure",
    "RandomState": "numpy.random.RandomState",
    "Generator": "numpy.random.Generator",
}
numpydoc_xref_ignore = {"of", "shape", "or", "default", "optional", "n_samples", "n_features",
                        "n_classes", "n_clusters", "n_features_selected", "by", "and", "the",
                        "same", "as", "keyword-only", "length", "one", "in", "to", "with",
                        "each", "per", "a", "an", "is", "when", "for", "if"}
# every public name needs a docstring; the numpydoc checks that hold across the package
numpydoc_validation_checks = {"GL08"}
numpydoc_validation_exclude = {r"\._[A-Za-z]", r"\.__[a-z]+__$"}

# a broken cross-reference to a sparsefs object is an error (-W); one to another package that
# the shipped inventories do not list stays plain text, as do private sparsefs modules
nitpicky = True
nitpick_ignore_regex = NITPICK_IGNORE_REGEX

# -- cross-links to other projects: inventories shipped in docs/_inventories ------------------
INV = HERE / "_inventories"  # written by: python -m docs.sitebuild inventories
intersphinx_mapping = {
    name: (url, str(INV / f"{name}.inv")) for name, url in BASE_URLS.items()
}
intersphinx_timeout = 1

# -- gallery: examples/ run at every build ----------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "doc_module": ("sparsefs",),
    "backreferences_dir": "api/generated/backreferences",
    "reference_url": {"sparsefs": None},
    "prefer_full_module": {r"sparsefs\..*"},
    "min_reported_time": 1,
    # no execution-time pages: they load jQuery and DataTables from CDNs
    "write_computation_times": False,
    "show_memory": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": FunctionSortKey(gallery_sort_key, "sparsefs gallery order"),
    "matplotlib_animations": False,
    "copyfile_regex": "",
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
}

# -- HTML -------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sparsefs {version}"
html_logo = None
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "header_links_before_dropdown": 6,
    "icon_links": [
        {"name": "Source code", "url": "https://github.com/sparsefs/sparsefs",
         "icon": "fa-brands fa-github"},
    ],
    # the wide methods table gets the page's width
    "secondary_sidebar_items": {"**": ["page-toc", "sourcelink"], "methods/index": []},
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_sidebars = {"index": [], "methods/index": []}  # the landing page, the wide table
html_show_sourcelink = True
html_copy_source = True
html_last_updated_fmt = None
