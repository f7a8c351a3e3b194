"""Tests of fetch_asu: lookup order, checksums, a file:// download, and the real data when present.

No network is used: downloads go to a ``file://`` URL of a temporary directory.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter

import numpy as np
import pytest
import scipy.io
from numpy.testing import assert_array_equal

from sparsefs.datasets import (
    ASU_DATASETS,
    ChecksumError,
    _asu,
    fetch_asu,
    get_data_home,
    list_asu,
)

NAME = "lung_discrete"  # remote file lung_small.mat: also checks the remote/local renaming


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A fake remote directory holding a small lung_small.mat, its sha256 patched in."""
    monkeypatch.delenv("SPARSEFS_DATA", raising=False)
    remote = tmp_path / "remote"
    remote.mkdir()
    rng = np.random.RandomState(0)
    X = rng.randint(-2, 3, size=(7, 5)).astype(np.int16)
    y = np.arange(1, 8, dtype=np.uint8)
    path = remote / ASU_DATASETS[NAME].remote
    scipy.io.savemat(path, {"X": X, "Y": y.reshape(-1, 1)})
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    monkeypatch.setitem(ASU_DATASETS, NAME, dataclasses.replace(ASU_DATASETS[NAME], sha256=sha))
    monkeypatch.setattr(_asu, "BASE_URL", remote.as_uri() + "/")
    return {"X": X, "y": y, "sha": sha, "remote": remote, "home": tmp_path / "home"}


def _leftovers(directory):
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def test_download_verify_and_cache(fake, monkeypatch):
    ds = fetch_asu(NAME, data_home=fake["home"])
    assert_array_equal(ds.X, fake["X"])
    assert_array_equal(ds.y, fake["y"])
    assert ds.name == NAME and ds.support is None
    assert "73 x 325" in ds.description
    assert _leftovers(fake["home"]) == ["lung_discrete.mat"]  # local name, no temp file left
    # now served from the cache: no download needed, and no re-hashing in this process
    (fake["remote"] / "lung_small.mat").unlink()
    calls = []
    monkeypatch.setattr(_asu, "_sha256", lambda p: calls.append(p) or "x")
    again = fetch_asu(NAME, data_home=fake["home"], download=False)
    assert_array_equal(again.X, fake["X"])
    assert calls == []


def test_download_to_default_cache(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    fetch_asu(NAME)
    assert _leftovers(tmp_path / "xdg" / "sparsefs") == ["lung_discrete.mat"]
    assert get_data_home() == tmp_path / "xdg" / "sparsefs"


def test_download_checksum_mismatch_leaves_nothing(fake, monkeypatch):
    bad = "0" * 64
    monkeypatch.setitem(ASU_DATASETS, NAME, dataclasses.replace(ASU_DATASETS[NAME], sha256=bad))
    with pytest.raises(ChecksumError, match=f"expected sha256 {bad}, got {fake['sha']}"):
        fetch_asu(NAME, data_home=fake["home"])
    assert _leftovers(fake["home"]) == []
    assert issubclass(ChecksumError, OSError)


def test_download_failure_leaves_nothing(fake):
    (fake["remote"] / "lung_small.mat").unlink()
    with pytest.raises(OSError, match="Could not download lung_discrete"):
        fetch_asu(NAME, data_home=fake["home"])
    assert _leftovers(fake["home"]) == []


def test_download_false_not_found(fake):
    with pytest.raises(FileNotFoundError, match=r"lung_discrete.mat.*SPARSEFS_DATA"):
        fetch_asu(NAME, data_home=fake["home"], download=False)


def test_lookup_order(fake, tmp_path, monkeypatch):
    # SPARSEFS_DATA is searched (and not written to); data_home comes first.
    env_dir = tmp_path / "env"
    env_dir.mkdir()
    (env_dir / "lung_discrete.mat").write_bytes((fake["remote"] / "lung_small.mat").read_bytes())
    monkeypatch.setenv("SPARSEFS_DATA", str(env_dir))
    monkeypatch.setattr(_asu, "BASE_URL", (tmp_path / "nowhere").as_uri() + "/")
    ds = fetch_asu(NAME, download=False)
    assert str(env_dir) in ds.description
    home = tmp_path / "home2"
    home.mkdir()
    scipy.io.savemat(home / "lung_discrete.mat", {"X": np.zeros((2, 2)), "Y": np.ones((2, 1))})
    # data_home wins over SPARSEFS_DATA; its (different) file fails the checksum
    with pytest.raises(ChecksumError, match="Checksum mismatch"):
        fetch_asu(NAME, data_home=home)
    assert (home / "lung_discrete.mat").exists()  # a bad local file is never deleted
    assert fetch_asu(NAME, data_home=home, verify=False).X.shape == (2, 2)


def test_unknown_and_fuzzy_names():
    with pytest.raises(ValueError, match=r"Unknown ASU data set name='colonn'.*'colon'.*ALLAML"):
        fetch_asu("colonn", download=False)
    with pytest.raises(ValueError, match="Valid names: ALLAML, leukemia"):
        fetch_asu("mnist", download=False)
    assert _asu._resolve_name("allaml").name == "ALLAML"
    assert _asu._resolve_name("TOX-171").name == "TOX_171"
    assert _asu._resolve_name("lung_small").name == "lung_discrete"
    assert _asu._resolve_name("tox_171.mat").name == "TOX_171"
    with pytest.raises(TypeError, match="name must be a str"):
        fetch_asu(3)
    with pytest.raises(TypeError, match="download must be a bool"):
        fetch_asu("colon", download="no")


def test_list_asu_table():
    table = list_asu()
    assert len(table) == 18
    names = [row["name"] for row in table]
    assert {"ALLAML", "lung_discrete", "TOX_171", "PCMAC", "madelon"} <= set(names)
    row = table[names.index("TOX_171")]
    assert row["remote"] == "TOX-171.mat" and row["filename"] == "TOX_171.mat"
    assert (row["n_samples"], row["n_features"], row["n_classes"]) == (171, 5748, 4)
    assert all(len(r["sha256"]) == 64 for r in table)


def test_get_data_home_creates(tmp_path):
    target = tmp_path / "a" / "b"
    assert get_data_home(target) == target
    assert target.is_dir()


# --------------------------------------------------------------------------------------------
# real data (skipped when ../shared/data or SPARSEFS_DATA is absent)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "shape", "counts"),
    [
        ("ALLAML", (72, 7129), {1: 47, 2: 25}),
        ("colon", (62, 2000), {-1: 40, 1: 22}),
        ("lung_discrete", (73, 325), {1: 6, 2: 5, 3: 5, 4: 16, 5: 7, 6: 13, 7: 21}),
        ("GLIOMA", (50, 4434), {1: 14, 2: 7, 3: 14, 4: 15}),
    ],
)
def test_real_data_matches_manifest(shared_data, name, shape, counts):
    ds = fetch_asu(name, download=False)
    assert ds.X.shape == shape
    assert dict(Counter(ds.y.tolist())) == counts
    assert ds.y.dtype.kind in "iu"
    assert len(ds.feature_names) == shape[1]


def test_real_data_every_table_entry(shared_data):
    """Every table row's file is there, with the table's checksum, shape and class count."""
    for entry in ASU_DATASETS.values():
        path = shared_data / entry.filename
        if not path.exists():
            pytest.fail(f"{entry.filename} missing from {shared_data}")
        ds = fetch_asu(entry.name, download=False)  # verifies the sha256
        assert ds.X.shape == (entry.n_samples, entry.n_features), entry.name
        assert np.unique(ds.y).size == entry.n_classes, entry.name
