"""``sparsefs.tl.select`` / ``sparsefs.get.selection_df`` on AnnData objects.

Independent references: the array API on the same matrix (scores must be identical), and
scanpy's own readers (``sc.get.rank_genes_groups_df``, ``sc.pl.rank_genes_groups_dotplot``).
"""

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

anndata = pytest.importorskip("anndata")
import pandas as pd  # noqa: E402

import sparsefs.get  # noqa: E402
import sparsefs.tl  # noqa: E402
from sparsefs.classification import SparseCenterClassifier  # noqa: E402
from sparsefs.selection import FisherScore  # noqa: E402


def _adata(sparse=False, seed=0, n=120, p=60):
    rng = np.random.default_rng(seed)
    groups = np.repeat(["b", "a", "c"], n // 3)  # categories not in sorted order
    X = rng.poisson(0.6, (n, p)).astype(np.float32)
    for j, g in enumerate(["b", "a", "c"]):
        X[groups == g, j] += 3  # gene j marks group j
    obs = pd.DataFrame(
        {"cell_type": pd.Categorical(groups, categories=["b", "a", "c"])},
        index=[f"cell{i}" for i in range(n)],
    )
    var = pd.DataFrame(index=[f"gene{j}" for j in range(p)])
    return anndata.AnnData(sp.csr_matrix(X) if sparse else X, obs=obs, var=var)


@pytest.mark.parametrize("sparse", [False, True])
def test_scores_equal_the_array_api(sparse):
    ad = _adata(sparse)
    sparsefs.tl.select(ad, "fisher_score", groupby="cell_type", n_features=5)
    ref = FisherScore(n_features_to_select=5).fit(ad.X, np.asarray(ad.obs["cell_type"]).astype(str))
    np.testing.assert_array_equal(ad.var["sparsefs_score"].to_numpy(), ref.scores_)
    np.testing.assert_array_equal(ad.var["sparsefs_rank"].to_numpy(), ref.ranking_)
    np.testing.assert_array_equal(ad.var["sparsefs_selected"].to_numpy(), ref.support_)
    assert {0, 1, 2} <= set(np.flatnonzero(ref.support_))
    assert ad.uns["sparsefs"]["params"]["method"] == "fisher_score"
    assert ad.uns["sparsefs"]["params"]["groupby"] == "cell_type"


def test_per_group_outputs_and_scanpy_layout():
    ad = _adata()
    sparsefs.tl.select(ad, "sparse_centers", groupby="cell_type", n_features=3)
    clf = SparseCenterClassifier(3).fit(ad.X, np.asarray(ad.obs["cell_type"]).astype(str))
    varm = ad.varm["sparsefs"]
    assert varm.shape == (ad.n_vars, 3)
    assert ad.uns["sparsefs"]["varm_columns"] == list(clf.classes_)
    # per group, its own marker gene comes first
    names = ad.uns["sparsefs"]["names"]
    assert names["b"][0] == "gene0" and names["a"][0] == "gene1" and names["c"][0] == "gene2"
    assert list(names.dtype.names) == ["b", "a", "c"]


def test_scanpy_readers_accept_the_output():
    sc = pytest.importorskip("scanpy")
    import matplotlib

    matplotlib.use("Agg")
    ad = _adata()
    sparsefs.tl.select(ad, "sparse_centers", groupby="cell_type", n_features=3, key_added="sfs")
    df = sc.get.rank_genes_groups_df(ad, group=None, key="sfs")
    assert set(df["group"]) == {"a", "b", "c"}
    top = df.groupby("group", observed=True).head(1).set_index("group")["names"].to_dict()
    assert top == {"b": "gene0", "a": "gene1", "c": "gene2"}
    sc.pl.rank_genes_groups_dotplot(ad, key="sfs", n_genes=2, show=False, dendrogram=False)


def test_backed_and_dask_backed(tmp_path):
    ad = _adata(sparse=True)
    path = tmp_path / "x.h5ad"
    ad.write_h5ad(path)
    sparsefs.tl.select(ad, "fisher_score", groupby="cell_type", n_features=4)
    backed = anndata.read_h5ad(path, backed="r")
    sparsefs.tl.select(backed, "fisher_score", groupby="cell_type", n_features=4)
    np.testing.assert_array_equal(backed.var["sparsefs_score"], ad.var["sparsefs_score"])
    da = pytest.importorskip("dask.array")
    dense = _adata(sparse=False)
    ref = sparsefs.tl.select(dense, "fisher_score", groupby="cell_type", n_features=4, copy=True)
    lazy = dense.copy()
    lazy.X = da.from_array(dense.X, chunks=(40, 60))
    sparsefs.tl.select(lazy, "fisher_score", groupby="cell_type", n_features=4)
    np.testing.assert_allclose(lazy.var["sparsefs_score"], ref.var["sparsefs_score"], rtol=1e-10)


def test_copy_semantics_layer_and_raw():
    ad = _adata()
    out = sparsefs.tl.select(ad, "fisher_score", groupby="cell_type", n_features=3, copy=True)
    assert out is not ad and "sparsefs" not in ad.uns and "sparsefs_score" in out.var
    assert sparsefs.tl.select(ad, "fisher_score", groupby="cell_type", n_features=3) is None
    ad.layers["double"] = ad.X * 2
    sparsefs.tl.select(ad, "fisher_score", groupby="cell_type", n_features=3, layer="double",
                       key_added="lay")
    np.testing.assert_array_equal(ad.var["lay_rank"], ad.var["sparsefs_rank"])
    full = _adata(p=80)
    full.raw = full
    small = full[:, :60].copy()
    sparsefs.tl.select(small, "fisher_score", groupby="cell_type", n_features=3, use_raw=True)
    assert "sparsefs_score" not in small.var  # raw has other genes: the frame goes to uns
    frame = sparsefs.get.selection_df(small)
    assert len(frame) == 80 and frame["rank"].is_monotonic_increasing


def test_selection_df_and_errors():
    ad = _adata()
    with pytest.raises(KeyError, match=r"run sparsefs\.tl\.select"):
        sparsefs.get.selection_df(ad)
    with pytest.raises(ValueError, match="groupby="):
        sparsefs.tl.select(ad, "fisher_score", n_features=3)
    with pytest.raises(KeyError, match="not a column"):
        sparsefs.tl.select(ad, "fisher_score", groupby="nope")
    sparsefs.tl.select(ad, "laplacian_score", n_features=4)  # unsupervised: no groupby needed
    frame = sparsefs.get.selection_df(ad, selected_only=True)
    assert len(frame) == 4 and frame["selected"].all()
    assert "names" not in ad.uns["sparsefs"]  # no per-group view without groupby


def test_import_sparsefs_does_not_import_anndata():
    code = "import sys, sparsefs, sparsefs.tl, sparsefs.get; print('anndata' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_continuous_and_survival_obs_columns():
    """target= reads a continuous obs column as numbers (ages in whole years too), time= /
    event= a survival target; the scores equal those of the estimator fitted directly."""
    anndata = pytest.importorskip("anndata")
    import pandas as pd

    from sparsefs.datasets import make_planted_regression, make_planted_survival
    from sparsefs.selection import LassoSelector, UnivariateScore

    d = make_planted_regression(n_samples=60, n_features=30, n_informative=3, effect=2.0,
                                random_state=0)
    s = make_planted_survival(n_samples=60, n_features=30, n_informative=3, effect=1.0,
                              random_state=0)
    ages = np.rint(10 * d.y + 40)
    # expression levels (no negative values), as tl.select expects of X
    Xd, Xs = d.X + 10.0, s.X + 10.0
    obs = pd.DataFrame({"age": ages.astype(int), "os_days": s.y["time"],
                        "dead": s.y["event"].astype(int)},
                       index=[f"c{i}" for i in range(60)])
    ad = anndata.AnnData(Xd, obs=obs)
    sparsefs.tl.select(ad, "lasso", target="age", n_features=3)
    ref = LassoSelector(n_features_to_select=3, target_type="regression").fit(Xd, ages)
    np.testing.assert_array_equal(ad.var["sparsefs_selected"].to_numpy(), ref.support_)
    assert ad.uns["sparsefs"]["params"]["target"] == "age"
    ad2 = anndata.AnnData(Xs, obs=obs)
    sparsefs.tl.select(ad2, "univariate_score", time="os_days", event="dead", n_features=3)
    ref = UnivariateScore(n_features_to_select=3).fit(Xs, s.y)
    np.testing.assert_allclose(ad2.var["sparsefs_score"].to_numpy(), ref.scores_)
    np.testing.assert_allclose(ad2.var["sparsefs_pval"].to_numpy(), ref.pvalues_)
    with pytest.raises(ValueError, match=r"target= .* or time= and event="):
        sparsefs.tl.select(ad2, "univariate_score", groupby="dead")


def test_sample_key_with_a_continuous_or_survival_target():
    """sample_key= with target= / time= and event= (issues #30 and #32 together): the
    error-control selector gets the donors (the F test of the donor means on a donor
    attribute, = scikit-learn's f_regression on hand-computed means), a target varying within
    donors is refused, stability resamples donors, and a method without groups= writes no
    cell-level p-values beside donor labels."""
    from sklearn.feature_selection import f_regression

    from sparsefs.selection import ErrorControlSelector, StabilitySelector, UnivariateScore
    from sparsefs.utils import survival_target

    rng = np.random.default_rng(0)
    n_donors, p = 9, 25
    g = np.repeat(np.arange(n_donors), rng.integers(10, 20, size=n_donors))
    age = rng.uniform(20, 80, size=n_donors)
    days = rng.uniform(100, 900, size=n_donors)
    dead = np.arange(n_donors) % 3 > 0
    offsets = 0.8 * rng.normal(size=(n_donors, p))
    offsets[:, :2] += (age[:, None] - 50) / 15
    X = 10.0 + offsets[g] + rng.normal(size=(g.shape[0], p))  # levels: no negative values
    obs = pd.DataFrame({"donor": [f"d{k}" for k in g], "age": age[g],
                        "pseudotime": age[g] + rng.normal(size=g.shape[0]),
                        "os_days": days[g], "dead": dead[g].astype(int)},
                       index=[f"c{i}" for i in range(g.shape[0])])
    ad = anndata.AnnData(X, obs=obs)
    sparsefs.tl.select(ad, "error_control", target="age", sample_key="donor", level=0.1)
    means = np.array([X[g == k].mean(axis=0) for k in range(n_donors)])
    np.testing.assert_allclose(ad.var["sparsefs_pval"].to_numpy(), f_regression(means, age)[1],
                               rtol=1e-9)
    ref = ErrorControlSelector(level=0.1).fit(X, age[g], groups=obs["donor"])
    np.testing.assert_array_equal(ad.var["sparsefs_selected"].to_numpy(), ref.support_)
    params = ad.uns["sparsefs"]["params"]
    assert params["sample_key"] == "donor" and params["target"] == "age"
    with pytest.raises(ValueError, match="varies within donors"):
        sparsefs.tl.select(ad, "error_control", target="pseudotime", sample_key="donor")

    sparsefs.tl.select(ad, "stability", time="os_days", event="dead", sample_key="donor",
                       estimator=UnivariateScore(n_features_to_select=3), n_resamples=8,
                       threshold=0.6, key_added="stab")
    y = survival_target(dead[g], days[g])
    stab = StabilitySelector(UnivariateScore(n_features_to_select=3), n_resamples=8,
                             threshold=0.6, random_state=0).fit(X, y, groups=obs["donor"])
    assert stab.design_ == "nested"
    np.testing.assert_allclose(ad.var["stab_freq"].to_numpy(), stab.frequencies_)

    sparsefs.tl.select(ad, "univariate_score", target="age", sample_key="donor",
                       n_features=3, key_added="uni")
    assert "uni_score" in ad.var and "uni_pval" not in ad.var  # cell-level: not written
