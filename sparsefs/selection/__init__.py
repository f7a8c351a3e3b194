"""Feature selectors: transformers that keep the most important columns of X."""

from sparsefs.selection._class_specific import ClassSpecificSelector
from sparsefs.selection._error_control import ErrorControlSelector
from sparsefs.selection._fisher_score import FisherScore, fisher_score
from sparsefs.selection._knockoffs import KnockoffSelector
from sparsefs.selection._laplacian_score import LaplacianScore
from sparsefs.selection._lasso import ElasticNetSelector, LassoSelector
from sparsefs.selection._ll_l21 import LlL21
from sparsefs.selection._ls_l21 import LsL21
from sparsefs.selection._mcfs import MCFS
from sparsefs.selection._mrmr import MRMR
from sparsefs.selection._mutual_info import MutualInfo
from sparsefs.selection._ndfs import NDFS
from sparsefs.selection._odds_ratio import OddsRatioSelector
from sparsefs.selection._relieff import ReliefF
from sparsefs.selection._rfs import RFS
from sparsefs.selection._smba import SMBA
from sparsefs.selection._spec import SPEC
from sparsefs.selection._stability import StabilitySelector
from sparsefs.selection._udfs import UDFS
from sparsefs.selection._ufcm import UFCM
from sparsefs.selection._univariate_score import UnivariateScore, univariate_score
from sparsefs.selection._variance import VarianceScore

__all__ = [
    "MCFS",
    "MRMR",
    "NDFS",
    "RFS",
    "SMBA",
    "SPEC",
    "UDFS",
    "UFCM",
    "ClassSpecificSelector",
    "ElasticNetSelector",
    "ErrorControlSelector",
    "FisherScore",
    "KnockoffSelector",
    "LaplacianScore",
    "LassoSelector",
    "LlL21",
    "LsL21",
    "MutualInfo",
    "OddsRatioSelector",
    "ReliefF",
    "StabilitySelector",
    "UnivariateScore",
    "VarianceScore",
    "fisher_score",
    "univariate_score",
]
