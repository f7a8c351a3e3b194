"""The method registry: one explicit table that the CLI, the docs and the common tests read.

A new method is added by one :class:`MethodInfo` row in ``_METHODS`` (``_entry``: imported from
its family's package); it is then listed by ``sparsefs methods``, run by ``sparsefs demo``, put
in the README table and run through every common test (scikit-learn's checks, the selection
contract and the bad-input matrix).
"""

import importlib
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["EstimatorParam", "MethodInfo", "build_params", "get_method", "list_methods"]

Family = Literal["selector", "classifier", "clusterer"]
Supervision = Literal["supervised", "unsupervised"]


@dataclass(frozen=True)
class EstimatorParam:
    """An estimator-valued parameter of a registry setting (a meta-estimator's base estimator),
    built only when the setting is used: the registry imports no estimator module.

    Attributes
    ----------
    import_path : str
        ``"module:Class"`` of the estimator.
    params : dict
        Its parameters.
    """

    import_path: str
    params: dict[str, Any] = field(default_factory=dict)

    def build(self) -> Any:
        """A new instance of the estimator."""
        module, _, attr = self.import_path.partition(":")
        return getattr(importlib.import_module(module), attr)(**self.params)


def build_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with every :class:`EstimatorParam` value replaced by a new estimator."""
    return {k: v.build() if isinstance(v, EstimatorParam) else v for k, v in params.items()}


@dataclass(frozen=True)
class MethodInfo:
    """One registered method.

    Attributes
    ----------
    stem : str
        The method's name across modules, tests and docs (``fisher_score`` →
        ``selection/_fisher_score.py``, ``_kernels/fisher_score.py``, ``docs/methods/...``).
    name : str
        The estimator's class name.
    family : {"selector", "classifier", "clusterer"}
    supervision : {"supervised", "unsupervised"}
    reference : str
        The paper (authors, title, venue, year).
    summary : str
        One line for tables.
    import_path : str
        ``"module:Class"``; imported on first use of :attr:`estimator`.
    test_params : tuple of dict
        Small, fast settings under which the common tests instantiate the estimator.
    demo_params : dict
        Settings for ``sparsefs demo`` on the embedded default (178 x 500), where the defaults
        would be slow (e.g. a full tuning grid); empty means the defaults.
    own_rule : str
        What ``n_features_to_select=None`` (``sparsefs select`` without ``-k``) keeps.
    cost : str
        The cost of a fit with the defaults where it is long (tens of seconds or more on a
        72 x 7129 microarray; empty otherwise);
        shown by ``sparsefs methods`` and in the note ``sparsefs select`` prints up front.
    slow_size : int or None
        ``n_samples * n_features`` from which ``sparsefs select`` prints that note.
    fit_seconds : float or None
        Seconds of one fit as ``sparsefs compare`` runs it by default (``rank`` mode,
        ``n_features_to_select=80``, the method's other defaults) on one training fold of the
        embedded default (142 x 500): CPU seconds on one BLAS thread, what a quiet machine's
        wall time is (``benchmarks/bench_method_costs.py``). ``compare`` scales it by the
        data's size for its up-front cost note and the first estimate of its progress bar;
        None counts as 1 s.
    aliases : tuple of str
        Former stems, still accepted by :func:`get_method`.
    inputs : tuple of str
        The kinds of X that ``fit`` takes: ``"dense"`` (numpy arrays, DataFrames; always),
        ``"sparse"`` (scipy CSR/CSC, never densified) and ``"dask"`` (dask arrays,
        docs/dask.md). Kept equal to the estimator's ``_accept_sparse`` / ``_fit_dask`` by
        ``sparsefs/tests/test_sparse_input.py``.
    kernel : str or None
        The stem of the method's kernel module ``_kernels/<kernel>.py`` when it is not
        :attr:`stem` (a method renamed while its kernel module kept the old name).
    targets : tuple of str
        The kinds of target ``fit`` takes (supervised methods): ``"classification"`` (class
        labels), ``"regression"`` (a continuous y), ``"survival"`` (a structured event /
        time array; docs/outcomes.md). Kept equal to the estimator's ``_targets`` by
        ``sparsefs/tests/test_targets.py``; empty for unsupervised methods (y is ignored).
    outcome_params : tuple of dict
        Settings for the common tests on continuous and survival targets (when the
        ``test_params`` need class labels, e.g. a meta-estimator's base); empty: the
        ``test_params``.
    """

    stem: str
    name: str
    family: Family
    supervision: Supervision
    reference: str
    summary: str
    import_path: str
    test_params: tuple[dict[str, Any], ...] = field(default=({},))
    demo_params: dict[str, Any] = field(default_factory=dict)
    own_rule: str = ""
    cost: str = ""
    slow_size: int | None = None
    fit_seconds: float | None = None
    aliases: tuple[str, ...] = ()
    kernel: str | None = None
    inputs: tuple[str, ...] = ("dense",)
    targets: tuple[str, ...] = ("classification",)
    outcome_params: tuple[dict[str, Any], ...] = ()

    @property
    def kernel_stem(self) -> str:
        """The name of the kernel module in ``sparsefs/_kernels``."""
        return self.kernel or self.stem

    @property
    def estimator(self) -> type:
        """The estimator class."""
        module, _, attr = self.import_path.partition(":")
        return getattr(importlib.import_module(module), attr)

    def as_dict(self) -> dict[str, Any]:
        """Plain-data view (for JSON output)."""
        return {
            "stem": self.stem,
            "name": self.name,
            "family": self.family,
            "supervision": self.supervision,
            "reference": self.reference,
            "summary": self.summary,
            "estimator": self.import_path.replace(":", "."),
            "own_rule": self.own_rule,
            "cost": self.cost,
            "fit_seconds": self.fit_seconds,
            "aliases": list(self.aliases),
            "input": list(self.inputs),
            "targets": list(self.targets) if self.supervision == "supervised" else [],
        }


#: The package of each family's estimators: an entry's ``import_path`` is
#: ``<package>:<name>``.
_PACKAGES = {"selector": "sparsefs.selection", "classifier": "sparsefs.classification",
             "clusterer": "sparsefs.clustering"}


def _entry(**fields: Any) -> MethodInfo:
    """A :class:`MethodInfo` imported from its family's package (``import_path``)."""
    return MethodInfo(import_path=f"{_PACKAGES[fields['family']]}:{fields['name']}", **fields)


_METHODS: tuple[MethodInfo, ...] = (
    _entry(
        stem="fisher_score",
        name="FisherScore",
        family="selector",
        supervision="supervised",
        reference="Duda, Hart & Stork, Pattern Classification, 2001; Gu, Li & Han, UAI 2011",
        summary="between- over within-class scatter per feature (rank-identical to ANOVA F)",
        fit_seconds=0.00024,
        inputs=("dense", "sparse", "dask"),
        test_params=({}, {"n_features_to_select": 2}, {"n_features_to_select": 0.5}),
        own_rule="features whose ANOVA F-test p-value passes Benjamini-Hochberg at fdr=0.05",
    ),
    _entry(
        stem="univariate_score",
        name="UnivariateScore",
        family="selector",
        supervision="supervised",
        reference="Pearson, Proc. R. Soc. London 58, 1895; Spearman, Am. J. Psychol. 15, 1904; "
        "Cox, JRSS-B 34, 1972; Mantel, Cancer Chemother. Rep. 50, 1966",
        summary="per-feature tests against a continuous target (F / Pearson / Spearman, equal "
        "to f_regression) or a survival target (Cox score test = log-rank for a binary "
        "feature), all features in one pass",
        inputs=("dense", "sparse", "dask"),
        targets=("regression", "survival"),
        test_params=({}, {"n_features_to_select": 2, "test": "spearman"},
                     {"n_features_to_select": 0.5, "test": "pearson"}),
        outcome_params=({}, {"n_features_to_select": 2, "ties": "efron"},
                        {"n_features_to_select": 0.5, "ties": "exact"}),
        own_rule="features whose p-value passes Benjamini-Hochberg at fdr=0.05",
    ),
    _entry(
        stem="l0_kmeans",
        name="L0KMeans",
        family="clusterer",
        supervision="unsupervised",
        reference="Chang, Wang, Li & Xu, Statistica Sinica 28(3), 2018 (arXiv:1403.7890)",
        summary="l0-k-means: k-means on the top-s features by between-cluster sum of squares; "
        "s by the gap statistic",
        fit_seconds=3.0,
        inputs=("dense", "sparse", "dask"),
        test_params=(
            {"n_clusters": 3, "n_permutations": 2, "n_init": 2, "random_state": 0},
            {"n_clusters": 3, "n_features_to_select": 2, "n_init": 2, "random_state": 0},
        ),
        own_rule="s chosen by the gap statistic over a grid (n_permutations=10 permuted copies)",
        cost="about 5 s on 72 x 7129 (ALLAML, 2 clusters; quiet 2-core machine): the gap "
        "tuning fits every grid value on X and on n_permutations permuted copies; -k skips it",
        aliases=("sparse_kmeans",),
        kernel="sparse_kmeans",
    ),
    _entry(
        stem="l1_kmeans",
        name="SparseKMeans",
        family="clusterer",
        supervision="unsupervised",
        reference="Witten & Tibshirani, JASA 105(490), 2010",
        summary="l1 sparse k-means: soft-thresholded BCSS feature weights (exact); bound by the "
        "permutation gap",
        fit_seconds=1.2,
        inputs=("dense", "sparse"),
        test_params=(
            {
                "n_clusters": 3,
                "n_permutations": 2,
                "n_init": 2,
                "wbound_grid": (1.2, 1.5, 2.0),
                "random_state": 0,
            },
            {"n_clusters": 3, "wbound": 1.5, "n_init": 2, "random_state": 0},
        ),
        # the authors' 6 alternations stop one short of convergence on the demo data
        demo_params={"max_iter": 20},
        own_rule="features with nonzero weight at the l1 bound chosen by the permutation gap "
        "(n_permutations=25); can be every feature (7129 of 7129 on ALLAML)",
        cost="about 10 s on 72 x 7129 (ALLAML, 2 clusters; quiet 2-core machine): every "
        "bound of the grid on X and on n_permutations permuted copies; -p wbound=... skips it",
        slow_size=500_000,
    ),
    _entry(
        stem="penalized_gmm",
        name="PenalizedGaussianMixture",
        family="clusterer",
        supervision="unsupervised",
        reference="Pan & Shen, JMLR 8, 2007",
        summary="diagonal Gaussian mixture with l1-penalised means (EM); features with all means "
        "zero dropped; penalty by BIC",
        fit_seconds=0.098,
        test_params=(
            {"n_clusters": 3, "n_alphas": 5, "n_init": 2, "max_iter": 30, "random_state": 0},
            {"n_clusters": 3, "alpha": 0.5, "n_init": 2, "random_state": 0},
        ),
        own_rule="features with at least one nonzero cluster mean at the penalty chosen by BIC",
    ),
    _entry(
        stem="ufcm",
        name="UFCM",
        family="selector",
        supervision="unsupervised",
        reference="Wang, Nie, Chang, Yao, Li & Sheng, ECML-PKDD 2015 (arXiv:1506.01330)",
        summary="class-margin projection with k-means pseudo-labels and an l2,p row penalty; "
        "features by row norms of W (matrix-free Lanczos W-step)",
        fit_seconds=0.95,
        inputs=("dense", "sparse"),
        test_params=(
            {"n_clusters": 3, "n_restarts": 2, "max_iter": 10, "random_state": 0},
            {"n_clusters": 2, "n_restarts": 1, "max_iter": 10, "beta": 10.0, "p": 0.5,
             "n_features_to_select": 2, "random_state": 0},
        ),
        own_rule="features whose row of W is not negligible: with the default beta most "
        "features (4654 of 7129 on ALLAML)",
    ),
    _entry(
        stem="smba",
        name="SMBA",
        family="selector",
        supervision="unsupervised",
        reference="Nardone, Ciaramella & Staiano, PeerJ CS 5:e237, 2019; Elhamifar, Sapiro & "
        "Vidal, CVPR 2012",
        summary="sparse self-representation of the features (l1,2 or l1 penalty, affine "
        "option), features by row norms of C; exact reduced group-lasso solver (l1,2) or "
        "column-blocked Woodbury ADMM (l1)",
        fit_seconds=0.056,
        inputs=("dense", "sparse", "dask"),
        test_params=(
            {"alpha": 5.0, "tol": 1e-6, "max_iter": 10000},
            {"penalty": "l1", "affine": False, "tol": 1e-6, "max_iter": 500,
             "n_features_to_select": 2},
        ),
        own_rule="the representatives: features with a nonzero row of C at alpha",
    ),
    _entry(
        stem="sparse_centers",
        name="SparseCenterClassifier",
        family="classifier",
        supervision="supervised",
        reference="Calafiore & Fracastoro, IEEE TNNLS 33(3), 2022 (arXiv:1911.07320)",
        summary="nearest class mean (l2) or median (l1) with centers differing on exactly k "
        "features, chosen exactly by the per-feature gain; multiclass row-sparse extension",
        fit_seconds=0.00024,
        inputs=("dense", "sparse", "dask"),
        test_params=(
            {},
            {"norm": "l1"},
            {"n_features_to_select": 2, "objective": "pooled", "standardize": True},
            {"norm": "l1", "objective": "pooled", "n_jobs": 1},
        ),
        own_rule="min(10, n_features) (the paper takes k as given)",
    ),
    _entry(
        stem="sparse_centers_cv",
        name="SparseCenterClassifierCV",
        family="classifier",
        supervision="supervised",
        reference="Calafiore & Fracastoro, IEEE TNNLS 33(3), 2022 (arXiv:1911.07320)",
        summary="sparse l1/l2 center classifier with k chosen by stratified CV over a grid "
        "(one fit per fold: the ranking is nested in k)",
        fit_seconds=0.0034,
        inputs=("dense", "sparse"),
        test_params=({"cv": 3, "random_state": 0}, {"norm": "l1", "cv": 3, "random_state": 0}),
        own_rule="k chosen by stratified 5-fold CV over a grid of counts",
    ),
    _entry(
        stem="laplacian_score",
        name="LaplacianScore",
        family="selector",
        supervision="unsupervised",
        reference="He, Cai & Niyogi, NIPS 2005",
        summary="locality preserving power of each feature on the kNN sample graph "
        "(raw score lower-is-better, kept as laplacian_scores_)",
        fit_seconds=0.0058,
        inputs=("dense", "sparse"),
        test_params=({}, {"n_features_to_select": 2, "affinity": "binary", "n_neighbors": 3}),
        own_rule="the best 10 % (the paper defines no count)",
    ),
    _entry(
        stem="variance",
        name="VarianceScore",
        family="selector",
        supervision="unsupervised",
        reference="Bommert, Welchowski, Schmid & Rahnenführer, Brief. Bioinform. 23(1), 2022",
        summary="the variance filter (no target): the baseline of the gene-expression survival "
        "benchmark",
        inputs=("dense", "sparse"),
        test_params=({}, {"n_features_to_select": 2}, {"threshold": 0.1}),
        own_rule="the best 10 % (threshold= keeps the variances above it, as VarianceThreshold)",
    ),
    _entry(
        stem="spec",
        name="SPEC",
        family="selector",
        supervision="unsupervised",
        reference="Zhao & Liu, ICML 2007",
        summary="spectral feature selection: phi1/phi2/phi3 of each normalised feature on the "
        "normalised graph Laplacian",
        fit_seconds=0.0023,
        inputs=("dense", "sparse"),
        test_params=(
            {},
            {"n_features_to_select": 2, "variant": "phi3", "n_clusters": 2, "n_neighbors": 5},
        ),
        own_rule="the best 10 % (the paper defines no count)",
    ),
    _entry(
        stem="mcfs",
        name="MCFS",
        family="selector",
        supervision="unsupervised",
        reference="Cai, Zhang & He, KDD 2010",
        summary="multi-cluster feature selection: spectral embedding, LARS per eigenvector, "
        "score max over k of abs(a_kj)",
        fit_seconds=0.06,
        test_params=({"n_clusters": 2}, {"n_features_to_select": 2, "n_clusters": 2}),
        own_rule="the best 10 % (the paper defines no count)",
        inputs=("dense", "sparse"),
    ),
    _entry(
        stem="udfs",
        name="UDFS",
        family="selector",
        supervision="unsupervised",
        reference="Yang, Shen, Ma, Huang & Zhou, IJCAI 2011",
        summary="local discriminative scatter + l2,1 penalty on an orthonormal W, "
        "re-weighted eigen-iteration (Woodbury/Lanczos when d is large)",
        fit_seconds=0.28,
        test_params=({"n_clusters": 2},),
        own_rule="the best 10 % (the l2,1 iteration zeroes no row)",
        inputs=("dense", "sparse"),
    ),
    _entry(
        stem="ndfs",
        name="NDFS",
        family="selector",
        supervision="unsupervised",
        reference="Li, Yang, Liu, Zhou & Lu, AAAI 2012",
        summary="nonnegative spectral cluster indicators + l2,1-regularised regression "
        "(n x n Woodbury solves)",
        fit_seconds=0.053,
        test_params=({"n_clusters": 2, "n_init": 1, "max_iter": 100, "random_state": 0},),
        own_rule="the best 10 % (the l2,1 re-weighting zeroes no row)",
        inputs=("dense", "sparse"),
    ),
    _entry(
        stem="relieff",
        name="ReliefF",
        family="selector",
        supervision="supervised",
        reference="Kononenko, ECML 1994; Robnik-Sikonja & Kononenko, Machine Learning 2003",
        summary="nearest hits vs nearest misses per class (vectorised ReliefF, multiclass "
        "prior-weighted); RReliefF for a continuous target",
        fit_seconds=0.022,
        inputs=("dense", "sparse"),
        test_params=(
            {},
            {"n_features_to_select": 2, "n_neighbors": 3, "n_instances": 0.5, "random_state": 0},
        ),
        targets=("classification", "regression"),
        own_rule="features whose weight exceeds threshold=0 (often about half on noise)",
    ),
    _entry(
        stem="mrmr",
        name="MRMR",
        family="selector",
        supervision="supervised",
        reference="Peng, Long & Ding, IEEE TPAMI 2005; Ding & Peng, JBCB 2005",
        summary="greedy max relevance, min redundancy (MID/MIQ by discretised or KSG mutual "
        "information; FCD/FCQ by F statistic and correlation; classes or a continuous target)",
        fit_seconds=0.087,
        test_params=(
            {"n_features_to_select": 2},
            {"n_features_to_select": 2, "criterion": "fcq"},
            {"n_features_to_select": 2, "criterion": "miq", "mi_estimator": "ksg",
             "random_state": 0},
        ),
        targets=("classification", "regression"),
        own_rule="the incremental rule: add features while the criterion shows a gain "
        "(hundreds on noisy high-dimensional data: 1768 of 7129 on ALLAML)",
        cost="about 90 s on 72 x 7129 (ALLAML; measured on a loaded 2-core machine) with the "
        "default own rule, which keeps 1768 features; -k 50 takes seconds",
    ),
    _entry(
        stem="mutual_info",
        name="MutualInfo",
        family="selector",
        supervision="supervised",
        reference="Kraskov, Stogbauer & Grassberger, Phys. Rev. E 2004; Ross, PLoS ONE 2014",
        summary="nearest-neighbour (KSG) mutual information with the classes or a continuous "
        "target (numba kernel, equal to scikit-learn's mutual_info_classif / "
        "mutual_info_regression)",
        fit_seconds=0.012,
        test_params=({"n_features_to_select": 2, "random_state": 0},),
        targets=("classification", "regression"),
        own_rule="features with a positive estimate, threshold=0 (about half on pure noise)",
    ),
    _entry(
        stem="lasso",
        name="LassoSelector",
        family="selector",
        supervision="supervised",
        reference="Tibshirani, JRSS-B 1996; Friedman, Hastie & Tibshirani, JSS 2010; Simon, "
        "Friedman, Hastie & Tibshirani, JSS 2011",
        summary="the lasso with the target's loss: multinomial logistic (classes), least "
        "squares (continuous, = scikit-learn's Lasso), Cox partial likelihood (survival; "
        "glmnet's coordinate descent); penalty chosen on the path to keep k features",
        inputs=("dense", "sparse"),
        targets=("classification", "regression", "survival"),
        fit_seconds=0.047,
        test_params=({"n_features_to_select": 2, "max_iter": 300},),
        outcome_params=({"n_features_to_select": 2}, {"ties": "efron"}),
        own_rule="the nonzero rows at alpha=0.5 (of the largest penalty)",
    ),
    _entry(
        stem="elastic_net",
        name="ElasticNetSelector",
        family="selector",
        supervision="supervised",
        reference="Zou & Hastie, JRSS-B 2005",
        summary="the elastic net with the target's loss (logistic, least squares, Cox); "
        "penalty chosen on the path to keep k features",
        inputs=("dense", "sparse"),
        targets=("classification", "regression", "survival"),
        fit_seconds=0.026,
        test_params=({"n_features_to_select": 0.5, "l1_ratio": 0.3, "max_iter": 300},),
        outcome_params=({"n_features_to_select": 0.5, "l1_ratio": 0.3},),
        own_rule="the nonzero rows at alpha=0.5 (of the largest penalty)",
    ),
    _entry(
        stem="rfs",
        name="RFS",
        family="selector",
        supervision="supervised",
        reference="Nie, Huang, Cai & Ding, NIPS 2010",
        summary="l2,1 loss + l2,1 penalty on one-hot classes, reweighting in n x n (dual) form",
        fit_seconds=0.042,
        inputs=("dense", "sparse"),
        test_params=({}, {"n_features_to_select": 2, "alpha": 0.3, "tol": 1e-3}),
        own_rule="the rows of W above 1e-6 of the largest norm at alpha=0.5",
    ),
    _entry(
        stem="ls_l21",
        name="LsL21",
        family="selector",
        supervision="supervised",
        reference="Obozinski, Taskar & Jordan, Stat. Comput. 2010; Liu, Ji & Ye, UAI 2009",
        summary="least squares on one-hot classes or several continuous targets + l2,1 "
        "penalty (multi-task lasso; accelerated proximal gradient)",
        fit_seconds=0.0036,
        inputs=("dense", "sparse"),
        test_params=({"n_features_to_select": 2, "alpha": 0.3, "max_iter": 300},),
        targets=("classification", "regression"),
        own_rule="the nonzero rows at alpha=0.5 (of the largest penalty)",
    ),
    _entry(
        stem="ll_l21",
        name="LlL21",
        family="selector",
        supervision="supervised",
        reference="Liu, Ji & Ye, UAI 2009",
        summary="multinomial logistic loss + l2,1 penalty (accelerated proximal gradient)",
        fit_seconds=0.013,
        inputs=("dense", "sparse"),
        test_params=({}, {"n_features_to_select": 2, "alpha": 0.3, "max_iter": 300}),
        own_rule="the nonzero rows at alpha=0.5 (of the largest penalty)",
    ),
    _entry(
        stem="sparse_kos",
        name="SparseKOSClassifier",
        family="classifier",
        supervision="supervised",
        reference="Lapanowski & Gaynanova, AISTATS 2019",
        summary="kernel optimal scoring with l1-penalised Gaussian-kernel feature weights "
        "(non-linear, multiclass; sigma2 -> gamma -> lambda tuned as in the paper; "
        "sigma2_selection=\"kos\" is 3-4x cheaper)",
        fit_seconds=3.2,
        test_params=(
            {"sigma2": 1.0, "ridge": 0.1, "alpha": 1e-3, "n_alphas": 3, "max_iter": 20},
            {"sigma2": 1.0, "ridge": 0.1, "alpha": 0.0},
            {"sigma2": 1.0, "ridge": 0.1, "alpha": 1e-3, "n_alphas": 3, "max_iter": 20,
             "n_features_to_select": 2},
        ),
        demo_params={"sigma2_quantiles": (0.2,), "n_alphas": 5, "cv": 3, "max_iter": 10},
        own_rule="features with nonzero weight at the tuned lambda (sigma2 -> gamma -> lambda "
        "by 5-fold CV)",
        cost="about 15 s on 72 x 7129 (ALLAML; 5 s with -p sigma2_selection=kos), but "
        "O(n^3) in the samples: minutes at 2000 x 23; -p sigma2_selection=kos -p n_alphas=5 "
        "-p cv=3 shortens it",
        # no slow_size: the cost grows with n^3, not n x p (seconds on ALLAML's 513 000 cells,
        # a minute and more at 2000 x 23): compare's cost note scales fit_seconds instead
    ),
    _entry(
        stem="sparse_naive_bayes",
        name="SparseNaiveBayes",
        family="classifier",
        supervision="supervised",
        reference="Askari, d'Aspremont & El Ghaoui, AISTATS 2020 (arXiv:1905.09884)",
        summary="naive Bayes (Bernoulli or multinomial) whose class parameters differ on at "
        "most k features: exact sorting solution (Bernoulli), convex bound with a certified "
        "duality gap (multinomial)",
        fit_seconds=0.00029,
        inputs=("dense", "sparse"),
        test_params=({}, {"n_features_to_select": 2, "alpha": 0.5, "fit_prior": False}),
        own_rule="min(10, n_features) features",
    ),
    _entry(
        stem="class_specific",
        name="ClassSpecificSelector",
        family="selector",
        supervision="supervised",
        reference="Nardone, Ciaramella & Staiano, PeerJ Comput. Sci. 5:e237, 2019; "
        "Pineda-Bautista, Carrasco-Ochoa & Martinez-Trinidad, ESWA 38(8), 2011",
        summary="one feature subset per class: a selector on each class's rows (SMBA-CSFS) or "
        "on SMOTE-balanced one-vs-rest labels (GF-CSFS); union of the per-class top-m",
        fit_seconds=0.068,
        inputs=("dense", "sparse"),  # sparse when its base selector takes it (SMBA does)
        test_params=(
            {"selector": "fisher_score", "strategy": "one_vs_rest", "random_state": 0},
            {"selector": "fisher_score", "strategy": "one_vs_rest", "balance": "none",
             "n_features_to_select": 2},
            {"n_features_to_select": 2, "random_state": 0},  # SMBA-CSFS: SMBA per class
            # SMOTE-balanced one-vs-rest that selects a subset (the scale tests see SMOTE)
            {"selector": "fisher_score", "strategy": "one_vs_rest", "n_features_to_select": 2,
             "random_state": 0},
        ),
        demo_params={"selector": "fisher_score", "strategy": "one_vs_rest"},
        own_rule="min(20, n_features) per class; the union of the per-class subsets",
    ),
    _entry(
        stem="class_specific_ensemble",
        name="ClassSpecificEnsembleClassifier",
        family="classifier",
        supervision="supervised",
        reference="Nardone, Ciaramella & Staiano, PeerJ Comput. Sci. 5:e237, 2019; "
        "Pineda-Bautista, Carrasco-Ochoa & Martinez-Trinidad, ESWA 38(8), 2011",
        summary="SMBA-CSFS / GF-CSFS ensemble: one linear SVM per class on its own top-m "
        "features (trained on all classes, SMOTE inside fit), combined by the claim/vote rule",
        kernel="class_specific",  # the decision rule and votes live with the selector's math
        fit_seconds=0.081,
        inputs=("dense", "sparse"),  # sparse when its base selector takes it (SMBA does)
        test_params=(
            {"selector": "fisher_score", "n_features_to_select": None, "random_state": 0},
            {"selector": "fisher_score", "n_features_to_select": 2, "balance": "none",
             "tie_rule": "restricted", "random_state": 0},
            # SMOTE inside fit, with a selection smaller than the data (the scale tests)
            {"selector": "fisher_score", "n_features_to_select": 2, "random_state": 0},
        ),
        demo_params={"selector": "fisher_score"},
        own_rule="min(20, n_features) per class; the union of the per-class subsets",
    ),
    _entry(
        stem="stability",
        name="StabilitySelector",
        family="selector",
        supervision="supervised",
        reference="Meinshausen & Bühlmann, JRSS-B 72(4), 2010; Shah & Samworth, JRSS-B 75(1), "
        "2013; Nogueira, Sechidis & Brown, JMLR 18(174), 2018",
        summary="stability selection over any selector (supervision of its base estimator, "
        "default LassoSelector): frequencies on complementary half-samples, cut-off from a "
        "PFER bound, Nogueira stability index with CI",
        inputs=("dense", "sparse"),  # sparse when its estimator takes it (the default lasso does)
        fit_seconds=0.080,
        test_params=(
            {"estimator": EstimatorParam("sparsefs.selection:FisherScore",
                                         {"n_features_to_select": 0.75}),
             "n_resamples": 10, "random_state": 0},
            {"estimator": EstimatorParam("sparsefs.selection:LaplacianScore",
                                         {"n_features_to_select": 0.5, "n_neighbors": 3}),
             "n_resamples": 6, "scheme": "subsample", "sample_fraction": 0.6,
             "n_features_to_select": 0.5, "random_state": 0},
            {"estimator": EstimatorParam("sparsefs.classification:SparseCenterClassifier",
                                         {"norm": "l1", "n_features_to_select": 0.5}),
             "n_resamples": 8, "pfer": 2.0, "random_state": 0},
        ),
        targets=("classification", "regression", "survival"),
        outcome_params=(
            {"estimator": EstimatorParam("sparsefs.selection:UnivariateScore",
                                         {"n_features_to_select": 0.5}),
             "n_resamples": 10, "random_state": 0},
            {"estimator": EstimatorParam("sparsefs.selection:LassoSelector",
                                         {"n_features_to_select": 2}),
             "n_resamples": 6, "pfer": 2.0, "random_state": 0},
        ),
        own_rule="features selected on at least 60% of the 50 half-samples (threshold=0.6); "
        "pfer= or threshold= set the cut-off",
        cost="n_resamples fits of the base estimator on half the samples",
    ),
    _entry(
        stem="error_control",
        name="ErrorControlSelector",
        family="selector",
        supervision="supervised",
        reference="Benjamini & Hochberg, JRSS-B 57, 1995; Benjamini & Yekutieli, Ann. Statist. "
        "29, 2001; Holm, Scand. J. Statist. 6, 1979; Phipson & Smyth, SAGMB 9, 2010",
        summary="p-values for any score (F, Welch t, Mann-Whitney, Kruskal-Wallis; F / "
        "Spearman for continuous and Cox score tests for survival targets; or stratified "
        "label permutations of an estimator's scores), then BH / BY (FDR) or Holm / "
        "Bonferroni / max-T (FWER)",
        fit_seconds=0.001,
        inputs=("dense", "sparse"),
        test_params=(
            {},
            {"method": "holm", "n_features_to_select": 2},
            # level = 0.5: the floor 1/(B+1) = 0.05 passes BH's first threshold level/8
            {"pvalues": "permutation", "n_permutations": 19, "level": 0.5, "random_state": 0},
            {"pvalues": "kruskal", "method": "by"},
            {"method": "maxt", "n_permutations": 19, "random_state": 0},
        ),
        targets=("classification", "regression", "survival"),
        outcome_params=(
            {},
            {"method": "holm", "n_features_to_select": 2},
            {"pvalues": "permutation", "n_permutations": 19, "level": 0.5, "random_state": 0,
             "estimator": EstimatorParam("sparsefs.selection:UnivariateScore",
                                         {"n_features_to_select": 1})},
        ),
        own_rule="features whose ANOVA F-test p-values pass Benjamini-Hochberg at FDR 0.05 "
        "(method=, level=, pvalues= choose others)",
        cost="pvalues='permutation': n_permutations fits of the estimator",
        kernel="multiple_testing",
    ),
    _entry(
        stem="knockoffs",
        name="KnockoffSelector",
        family="selector",
        supervision="supervised",
        reference="Candès, Fan, Janson & Lv, JRSS-B 80, 2018; Barber & Candès, Ann. Statist. "
        "43, 2015; Ren & Barber, JRSS-B 86, 2024",
        summary="model-X knockoff filter: Gaussian knockoffs in O(npr) (no p x p matrix) from "
        "a correlation model checked on held-out rows (spiked or Ledoit-Wolf, or a known "
        "matrix), Fisher-difference (class labels), lasso or any-score statistics, knockoff+ "
        "threshold, e-value derandomisation",
        fit_seconds=0.093,
        test_params=(
            {"n_features_to_select": 2, "statistic": "lasso_coef_diff", "random_state": 0},
            {"statistic": "score_diff", "fdr": 0.5, "random_state": 0},
        ),
        targets=("classification", "regression", "survival"),
        outcome_params=(
            {"estimator": EstimatorParam("sparsefs.selection:UnivariateScore",
                                         {"n_features_to_select": 1}),
             "fdr": 0.5, "random_state": 0},
        ),
        own_rule="the knockoff+ selection at FDR 0.1 (fdr=); none when fewer than 1/fdr "
        "statistics are positive",
        kernel="knockoffs",
    ),
)


def list_methods(
    family: Family | None = None, supervision: Supervision | None = None
) -> list[MethodInfo]:
    """Every registered method, optionally filtered.

    Parameters
    ----------
    family : {"selector", "classifier", "clusterer"}, optional
    supervision : {"supervised", "unsupervised"}, optional

    Returns
    -------
    list of MethodInfo
        In registry order.

    Examples
    --------
    >>> from sparsefs import list_methods
    >>> [m.name for m in list_methods(family="selector")][:1]
    ['FisherScore']
    """
    for value, allowed, label in (
        (family, ("selector", "classifier", "clusterer"), "family"),
        (supervision, ("supervised", "unsupervised"), "supervision"),
    ):
        if value is not None and value not in allowed:
            raise ValueError(f"{label}={value!r} is not one of {allowed}.")
    return [
        m
        for m in _METHODS
        if (family is None or m.family == family)
        and (supervision is None or m.supervision == supervision)
    ]


def get_method(key: str) -> MethodInfo:
    """Look a method up by stem, class name or former stem (case-insensitive).

    ``sparse_kmeans`` (the former stem of :class:`~sparsefs.clustering.L0KMeans`, now
    ``l0_kmeans``) is still accepted; ``SparseKMeans`` (the class) is the l1 method ``l1_kmeans``.

    Raises
    ------
    ValueError
        If no method matches; the message lists the known stems.
    """
    wanted = key.strip().lower()
    for m in _METHODS:
        if wanted in (m.stem.lower(), m.name.lower()):
            return m
    for m in _METHODS:
        if wanted in (a.lower() for a in m.aliases):
            return m
    known = ", ".join(m.stem for m in _METHODS)
    raise ValueError(f"unknown method {key!r}; known methods: {known}.")


#: How the methods table and ``sparsefs methods`` name each kind of target.
TARGET_WORDS = {"classification": "classes", "regression": "continuous", "survival": "survival"}


def methods_markdown() -> str:
    """The registry as a markdown table (the README's methods table is kept equal to this)."""
    lines = [
        "| stem | estimator | family | supervision | input | what it does | reference |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in _METHODS:
        module = m.import_path.split(":")[0]
        supervision = m.supervision
        if m.supervision == "supervised" and m.targets != ("classification",):
            supervision += ": " + ", ".join(TARGET_WORDS[t] for t in m.targets)
        lines.append(
            f"| `{m.stem}` | `{module}.{m.name}` | {m.family} | {supervision} "
            f"| {' / '.join(m.inputs)} | {m.summary} | {m.reference} |"
        )
    return "\n".join(lines)
