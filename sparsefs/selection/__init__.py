"""Feature selectors: transformers that keep the most important columns of X."""

from sparsefs.selection._fisher_score import FisherScore, fisher_score

__all__ = ["FisherScore", "fisher_score"]
