"""Scanpy-style getters: tidy frames of what ``sparsefs.tl`` wrote into an AnnData object."""

from sparsefs.get._frames import selection_df

__all__ = ["selection_df"]
