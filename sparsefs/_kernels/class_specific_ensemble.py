"""Kernel of the class-specific ensemble classifier (stem ``class_specific_ensemble``).

The ensemble's math is the decision rule and the vote count of
:mod:`sparsefs._kernels.class_specific` (Nardone, Ciaramella & Staiano, PeerJ Comput. Sci.
5:e237, 2019; specs/smba-csfs.md A.8); this module names them under the ensemble's stem.
"""

from sparsefs._kernels.class_specific import TIE_RULES, ensemble_decision, vote_counts

__all__ = ["TIE_RULES", "ensemble_decision", "vote_counts"]
