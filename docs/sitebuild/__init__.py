"""The documentation site: build it, check it in a browser (``python -m docs.sitebuild``).

The site's sources are ``docs/`` (the Markdown pages, as the code host shows them) and
``examples/`` (the gallery) of a checkout; Sphinx, the PyData theme, numpydoc, MyST and
sphinx-gallery come with ``pip install -e ".[docs]"``. Everything is built offline: the API
reference is written from the ``__all__`` of every public module (:func:`write_api_pages`),
cross-links to numpy, scipy, scikit-learn, pandas, anndata, matplotlib and dask come from the
inventories shipped in ``docs/_inventories``, and MathJax is served by the site itself.
See ``docs/building.md``.
"""

from ._api import (
    PublicName,
    missing_docstrings,
    public_modules,
    public_names,
    write_api_pages,
)
from ._browser import PageCheck, check_site, find_chromium
from ._build import BuildResult, build

__all__ = [
    "BuildResult",
    "PageCheck",
    "PublicName",
    "build",
    "check_site",
    "find_chromium",
    "missing_docstrings",
    "public_modules",
    "public_names",
    "write_api_pages",
]
