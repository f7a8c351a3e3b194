"""Scanpy-style tools: run sparsefs methods on AnnData objects (``sparsefs.tl.select``).

anndata and scanpy are optional: nothing here imports them (AnnData is used through its own
methods), and ``import sparsefs`` does not import this package. See docs/single_cell.md.
"""

from sparsefs.tl._select import select, write_selection

__all__ = ["select", "write_selection"]
