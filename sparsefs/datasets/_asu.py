"""The scikit-feature (ASU) benchmark sets: a checksummed table, a local lookup and a download.

The files are the MATLAB ``.mat`` files of the ASU feature-selection repository as stored in
the ``jundongl/scikit-feature`` GitHub repository (``skfeature/data/``; Li et al., "Feature
Selection: A Data Perspective", ACM Computing Surveys 50(6), 2017). The sha256 digests, shapes
and label codings below were taken from the files themselves.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._loaders import Dataset, load

__all__ = [
    "ASU_DATASETS",
    "BASE_URL",
    "ChecksumError",
    "fetch_asu",
    "get_data_home",
    "list_asu",
]

BASE_URL = "https://raw.githubusercontent.com/jundongl/scikit-feature/master/skfeature/data/"
"""Where :func:`fetch_asu` downloads from (the remote file name is appended)."""

DATA_ENV_VAR = "SPARSEFS_DATA"
"""Environment variable naming a directory that already holds data files (searched, never
written to)."""

_CHUNK = 1 << 20


class ChecksumError(OSError):
    """A data file's sha256 digest differs from the expected one."""


@dataclass(frozen=True, slots=True)
class ASUEntry:
    """One row of the ASU table.

    Attributes
    ----------
    name : str
        The name to pass to :func:`fetch_asu`; the local file is ``name + ".mat"``.
    remote : str
        The file name in the remote repository (differs for ``lung_discrete`` and
        ``TOX_171``).
    sha256 : str
        Hex digest of the file.
    n_bytes : int
        File size.
    n_samples, n_features, n_classes : int
        Shape and number of classes.
    labels : str
        The label coding (label: count), as stored in the file.
    domain : str
        Kind of data.
    note : str
        Provenance and caveats.
    """

    name: str
    remote: str
    sha256: str
    n_bytes: int
    n_samples: int
    n_features: int
    n_classes: int
    labels: str
    domain: str
    note: str

    @property
    def filename(self) -> str:
        """The local file name, ``name + ".mat"``."""
        return f"{self.name}.mat"


_LI = "via the ASU feature-selection repository (Li et al., ACM Computing Surveys 2017)"
_DISCRETE = "int16, discretised to {-2, 0, 2} by Ding & Peng (mRMR, JBCB 2005)"

ASU_DATASETS: dict[str, ASUEntry] = {
    e.name: e
    for e in [
        ASUEntry(
            name="ALLAML",
            remote="ALLAML.mat",
            sha256="068afe0fe1021932e1e7d801294c267de8aeaa9d41899acfac024e72b0d44c1e",
            n_bytes=3_639_219,
            n_samples=72,
            n_features=7129,
            n_classes=2,
            labels="1: 47 (ALL), 2: 25 (AML)",
            domain="microarray",
            note="Golub et al., Science 1999; float64, already z-scored per feature.",
        ),
        ASUEntry(
            name="leukemia",
            remote="leukemia.mat",
            sha256="eb92382fb77c968864cb0a92a2c77acde7f88ba7fe5fd5a64b98184e3a05269d",
            n_bytes=154_743,
            n_samples=72,
            n_features=7070,
            n_classes=2,
            labels="-1: 47, +1: 25",
            domain="microarray",
            note=f"Golub et al. 1999, same patients as ALLAML; {_DISCRETE}.",
        ),
        ASUEntry(
            name="GLIOMA",
            remote="GLIOMA.mat",
            sha256="c31cd32edd770c7a102729839e670e588bc959a591e0eae5a0676c9ca11d4c4f",
            n_bytes=1_462_087,
            n_samples=50,
            n_features=4434,
            n_classes=4,
            labels="1: 14, 2: 7, 3: 14, 4: 15",
            domain="microarray",
            note="Nutt et al., Cancer Res 2003; float64, log10 scale.",
        ),
        ASUEntry(
            name="lung_discrete",
            remote="lung_small.mat",
            sha256="93c6a65eb1f6f9f95ac897010c337254a57c57e7f8c0c9a7963a0e03de8233f4",
            n_bytes=7516,
            n_samples=73,
            n_features=325,
            n_classes=7,
            labels="1: 6, 2: 5, 3: 5, 4: 16, 5: 7, 6: 13, 7: 21",
            domain="microarray",
            note=f"Garber et al., PNAS 2001; {_DISCRETE}; remote file lung_small.mat.",
        ),
        ASUEntry(
            name="lymphoma",
            remote="lymphoma.mat",
            sha256="bd834ed911d47ecf2e07625ed77617d514d89ee398fa2e7a787230f7cf5243f8",
            n_bytes=110_185,
            n_samples=96,
            n_features=4026,
            n_classes=9,
            labels="1: 46, 2: 10, 3: 9, 4: 11, 5: 6, 6: 6, 7: 4, 8: 2, 9: 2",
            domain="microarray",
            note=f"Alizadeh et al., Nature 2000 (the SMBA-CSFS paper's 'DLBCL'); {_DISCRETE}.",
        ),
        ASUEntry(
            name="colon",
            remote="colon.mat",
            sha256="ffcdeba03eb67cec403fa1dc9f827c22a6e2c57786bf3e01dfe1b4b3e25e0a2f",
            n_bytes=36_319,
            n_samples=62,
            n_features=2000,
            n_classes=2,
            labels="-1: 40 (tumour), +1: 22 (normal)",
            domain="microarray",
            note=f"Alon et al., PNAS 1999; {_DISCRETE}.",
        ),
        ASUEntry(
            name="TOX_171",
            remote="TOX-171.mat",
            sha256="f52f57e61775b7830c84750456d7fadfd220d1cc8eed26419c3390eb9216cc84",
            n_bytes=3_470_586,
            n_samples=171,
            n_features=5748,
            n_classes=4,
            labels="1: 45, 2: 45, 3: 39, 4: 42",
            domain="microarray",
            note="toxicology microarray; float64 raw intensities; remote file TOX-171.mat.",
        ),
        ASUEntry(
            name="arcene",
            remote="arcene.mat",
            sha256="779d678207b9a8c0ba8f2f5ecdb2216d9f98bf475ab040e806797efd36331bc5",
            n_bytes=1_900_005,
            n_samples=200,
            n_features=10_000,
            n_classes=2,
            labels="-1: 112, +1: 88",
            domain="mass spectrometry",
            note=(
                "NIPS 2003 feature-selection challenge (Guyon et al.), train + valid; uint16 "
                "0-999, some constant columns."
            ),
        ),
        ASUEntry(
            name="COIL20",
            remote="COIL20.mat",
            sha256="4595ebdda07f47b0eb014fcfaddc22b452f9aed9c1d9261a0d5bc336c1ee1344",
            n_bytes=3_024_549,
            n_samples=1440,
            n_features=1024,
            n_classes=20,
            labels="1..20, 72 each",
            domain="image",
            note=(
                "Columbia COIL-20 (Nene et al. 1996), 32x32, float64 in [0, 1]; X[i].reshape((32,"
                " 32), order='F') is upright."
            ),
        ),
        ASUEntry(
            name="ORL",
            remote="ORL.mat",
            sha256="e257ec36002e48688ed7f3b9fda13f479f2fd98864fa0672d1353eda1912b189",
            n_bytes=376_584,
            n_samples=400,
            n_features=1024,
            n_classes=40,
            labels="1..40, 10 each",
            domain="image",
            note=(
                "AT&T/ORL faces (Samaria & Harter 1994), 32x32, uint8; X[i].reshape((32, 32), "
                "order='F') is upright."
            ),
        ),
        ASUEntry(
            name="Yale",
            remote="Yale.mat",
            sha256="cccd29abd2c520dd5cc8ff7645b422c2bdadd59406a6b6a0239143d9d44afcf3",
            n_bytes=161_021,
            n_samples=165,
            n_features=1024,
            n_classes=15,
            labels="1..15, 11 each",
            domain="image",
            note=(
                "Yale faces (Belhumeur et al. 1997), 32x32, uint8; X[i].reshape((32, 32), "
                "order='F') is upright."
            ),
        ),
        ASUEntry(
            name="warpAR10P",
            remote="warpAR10P.mat",
            sha256="92b5f7e72b5715ada8f2df16e6d8e5effd8e0034a53a656ed9ef76e3f727d413",
            n_bytes=279_711,
            n_samples=130,
            n_features=2400,
            n_classes=10,
            labels="1..10, 13 each",
            domain="image",
            note=(
                "AR faces (Martinez & Benavente 1998), 10 persons, 60x40, uint8; "
                "X[i].reshape((60, 40), order='F') is upright."
            ),
        ),
        ASUEntry(
            name="orlraws10P",
            remote="orlraws10P.mat",
            sha256="6ffa58759c5636f4ce311d23e44ef8de9f39bbb844902154c0cc5daac71226d6",
            n_bytes=951_783,
            n_samples=100,
            n_features=10_304,
            n_classes=10,
            labels="1..10, 10 each",
            domain="image",
            note=(
                "ORL faces, 10 persons, 112x92, uint8 (shares photographs with ORL); "
                "X[i].reshape((112, 92), order='F') is upright."
            ),
        ),
        ASUEntry(
            name="pixraw10P",
            remote="pixraw10P.mat",
            sha256="aa4b474244ae847dc2efdc868c0ff58fc3748a830c2ffdf760a1697cf72088f8",
            n_bytes=520_463,
            n_samples=100,
            n_features=10_000,
            n_classes=10,
            labels="1..10, 10 each",
            domain="image",
            note=(
                "PIX faces, 10 persons, 100x100, uint8 0-62; X[i].reshape((100, 100), order='F') "
                "is upright."
            ),
        ),
        ASUEntry(
            name="Isolet",
            remote="Isolet.mat",
            sha256="ea73c69b1342a7def8199458e53a70307a83d557eceb2579863dda57c3ccd2b1",
            n_bytes=3_652_673,
            n_samples=1560,
            n_features=617,
            n_classes=26,
            labels="1..26, 60 each",
            domain="speech",
            note=(
                "UCI ISOLET spoken letters (Fanty & Cole 1991), 1560-sample subset, float64 in "
                "[-1, 1]."
            ),
        ),
        ASUEntry(
            name="madelon",
            remote="madelon.mat",
            sha256="7dc9c9ff8d902651948e2df7f9cb6ed38c5d91e4c4159914cecb1ddbc7def12c",
            n_bytes=1_496_573,
            n_samples=2600,
            n_features=500,
            n_classes=2,
            labels="-1: 1300, +1: 1300",
            domain="synthetic",
            note=(
                "NIPS 2003 challenge MADELON (20 informative of 500; which ones is not "
                "published), train + valid, uint16 0-999."
            ),
        ),
        ASUEntry(
            name="BASEHOCK",
            remote="BASEHOCK.mat",
            sha256="e0452e0f3c0fefdc5cb6352165e4ba4a25c3a2a7b5a5b4d44e103742d6317aa0",
            n_bytes=279_059,
            n_samples=1993,
            n_features=4862,
            n_classes=2,
            labels="1: 994, 2: 999",
            domain="text",
            note=(
                "20 Newsgroups (Lang 1995) baseball vs hockey, uint8 term counts stored dense "
                "(98.6% zeros)."
            ),
        ),
        ASUEntry(
            name="PCMAC",
            remote="PCMAC.mat",
            sha256="9999dfccf97ab88f87127dd3457da436acb75cda9f0af4750e7cae5fe1a31b25",
            n_bytes=191_131,
            n_samples=1943,
            n_features=3289,
            n_classes=2,
            labels="1: 982, 2: 961",
            domain="text",
            note="20 Newsgroups ibm.pc vs mac, uint8 term counts stored dense (98.5% zeros).",
        ),
    ]
}
"""The ASU benchmark sets that :func:`fetch_asu` knows, by name."""


def list_asu() -> list[dict[str, Any]]:
    """Return the ASU table, one dict per data set.

    Returns
    -------
    list of dict
        Keys ``name``, ``remote``, ``sha256``, ``n_bytes``, ``n_samples``, ``n_features``,
        ``n_classes``, ``labels``, ``domain``, ``note``, ``filename``. ``pandas.DataFrame`` of
        it is a readable overview.

    Examples
    --------
    >>> from sparsefs.datasets import list_asu
    >>> [d["name"] for d in list_asu()][:3]
    ['ALLAML', 'leukemia', 'GLIOMA']
    """
    return [{**dataclasses.asdict(e), "filename": e.filename} for e in ASU_DATASETS.values()]


def get_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """Return the directory where downloaded data sets are stored, creating it if needed.

    Parameters
    ----------
    data_home : str, path-like or None, default=None
        If given, that directory (``~`` is expanded). Otherwise ``$XDG_CACHE_HOME/sparsefs``
        when ``XDG_CACHE_HOME`` is set, else ``~/.cache/sparsefs``.

    Returns
    -------
    pathlib.Path
        The directory (it exists on return).
    """
    path = _default_cache_dir() if data_home is None else Path(os.fspath(data_home)).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _default_cache_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "sparsefs"


def shared_data_dir() -> Path | None:
    """The directory of the project's shared real data sets, or ``None`` if there is none.

    ``$SPARSEFS_DATA`` when set (``None`` if it is not a directory); else ``../shared/data``
    next to a source checkout of sparsefs, if it exists. Meant for tests and benchmarks that
    use real data when available and skip otherwise.
    """
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        path = Path(env).expanduser()
        return path.resolve() if path.is_dir() else None
    candidate = (Path(__file__).resolve().parents[2] / ".." / "shared" / "data").resolve()
    return candidate if candidate.is_dir() else None


# --------------------------------------------------------------------------------------------
# fetch_asu
# --------------------------------------------------------------------------------------------


def fetch_asu(
    name: str,
    *,
    data_home: str | os.PathLike[str] | None = None,
    download: bool = True,
    verify: bool = True,
) -> Dataset:
    """Load one scikit-feature (ASU) benchmark data set by name.

    The file ``<name>.mat`` is looked for, in this order, in

    1. ``data_home``, when given;
    2. the directory named by the environment variable ``SPARSEFS_DATA``, when set;
    3. the default cache, :func:`get_data_home` (``$XDG_CACHE_HOME/sparsefs`` or
       ``~/.cache/sparsefs``).

    If it is in none of them and ``download=True``, it is downloaded from ``BASE_URL`` +
    the remote file name into ``data_home`` (or the default cache when ``data_home`` is
    None): written to a temporary file in that directory, checked against the table's sha256
    and only then renamed into place, so a failed or corrupt download leaves nothing behind.
    ``SPARSEFS_DATA`` is only read, never written to.

    Parameters
    ----------
    name : str
        A name from :func:`list_asu`. Matching ignores case and treats ``-`` as ``_``; the
        remote names ``lung_small`` and ``TOX-171`` are accepted too.
    data_home : str, path-like or None, default=None
        A directory searched first and used for downloads.
    download : bool, default=True
        Whether to download a file that is not found locally.
    verify : bool, default=True
        Check the sha256 of a file found locally. The result is remembered for the life of the
        process per (path, modification time, size), so repeated loads do not re-hash.
        Downloads are always verified.

    Returns
    -------
    Dataset
        ``X`` as stored (e.g. int16 for the discretised sets), ``y`` the labels as stored
        (codings differ: ``1..K`` or ``{-1, +1}``, see :func:`list_asu`), ``support=None``,
        ``name`` the canonical name, ``description`` the provenance and label coding.

    Raises
    ------
    ValueError
        If ``name`` is unknown (the message lists the valid names and close matches).
    FileNotFoundError
        If the file is not found locally and ``download=False``.
    ChecksumError
        (a subclass of :class:`OSError`) If a local or downloaded file has the wrong sha256;
        a bad download is deleted, a bad local file is left as it is.
    OSError
        If the download fails.

    Examples
    --------
    >>> from sparsefs.datasets import fetch_asu
    >>> ds = fetch_asu("colon", download=False)  # doctest: +SKIP
    >>> ds.X.shape  # doctest: +SKIP
    (62, 2000)
    """
    entry = _resolve_name(name)
    if not isinstance(download, bool):
        raise TypeError(f"download must be a bool, got {download!r}.")
    if not isinstance(verify, bool):
        raise TypeError(f"verify must be a bool, got {verify!r}.")

    searched = _search_dirs(data_home)
    path = next((d / entry.filename for d in searched if (d / entry.filename).is_file()), None)
    if path is not None:
        if verify:
            _verify_local(path, entry.sha256)
    elif download:
        path = _download(entry, get_data_home(data_home))
    else:
        where = ", ".join(str(d) for d in searched)
        raise FileNotFoundError(
            f"ASU data set {entry.name!r} ({entry.filename}) was not found in: {where}. "
            f"Put {entry.filename} in one of these directories (for example set the "
            f"environment variable {DATA_ENV_VAR} to a directory holding it), or call "
            f"fetch_asu({entry.name!r}, download=True) to download it."
        )

    ds = load(path)
    description = (
        f"ASU/scikit-feature data set {entry.name}: {entry.n_samples} x {entry.n_features}, "
        f"{entry.n_classes} classes ({entry.labels}); {entry.domain}. {entry.note} Obtained "
        f"{_LI}; cite the original study and Li et al. File: {path}."
    )
    return dataclasses.replace(ds, name=entry.name, description=description)


def _resolve_name(name: str) -> ASUEntry:
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}.")
    if name in ASU_DATASETS:
        return ASU_DATASETS[name]

    def key(s: str) -> str:
        s = s.strip()
        s = s[:-4] if s.lower().endswith(".mat") else s
        return s.lower().replace("-", "_")

    aliases = {}
    for e in ASU_DATASETS.values():
        aliases[key(e.name)] = e
        aliases[key(e.remote)] = e
    if key(name) in aliases:
        return aliases[key(name)]
    close = difflib.get_close_matches(key(name), list(aliases), n=3, cutoff=0.6)
    suggestion = sorted({aliases[c].name for c in close})
    hint = f" Did you mean {' or '.join(repr(s) for s in suggestion)}?" if suggestion else ""
    raise ValueError(
        f"Unknown ASU data set name={name!r}.{hint} Valid names: {', '.join(ASU_DATASETS)}."
    )


def _search_dirs(data_home: str | os.PathLike[str] | None) -> list[Path]:
    dirs: list[Path] = []
    if data_home is not None:
        dirs.append(Path(os.fspath(data_home)).expanduser())
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        dirs.append(Path(env).expanduser())
    dirs.append(_default_cache_dir())
    unique: list[Path] = []
    for d in dirs:
        if d not in unique:
            unique.append(d)
    return unique


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


# (resolved path, mtime_ns, size) -> sha256 of files already hashed in this process.
_VERIFIED: dict[tuple[str, int, int], str] = {}


def _verify_local(path: Path, expected: str) -> None:
    stat = path.stat()
    cache_key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    actual = _VERIFIED.get(cache_key)
    if actual is None:
        actual = _sha256(path)
        _VERIFIED[cache_key] = actual
    if actual != expected:
        raise ChecksumError(
            f"Checksum mismatch for {path}: expected sha256 {expected}, got {actual}. The file "
            "is corrupt or a different version; delete it (fetch_asu will download it again) "
            "or pass verify=False to use it anyway."
        )


def _download(entry: ASUEntry, directory: Path) -> Path:
    url = BASE_URL + urllib.parse.quote(entry.remote)
    final = directory / entry.filename
    fd, tmp_name = tempfile.mkstemp(prefix=f".{entry.filename}.", suffix=".part", dir=directory)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=60) as response:
                    while chunk := response.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            except (urllib.error.URLError, TimeoutError) as exc:
                reason = getattr(exc, "reason", exc)
                raise OSError(
                    f"Could not download {entry.name} from {url}: {reason}. Without network "
                    f"access, put {entry.filename} in a directory and set {DATA_ENV_VAR} to "
                    "it, or pass data_home=."
                ) from exc
        actual = digest.hexdigest()
        if actual != entry.sha256:
            raise ChecksumError(
                f"Checksum mismatch for {entry.name} downloaded from {url}: expected sha256 "
                f"{entry.sha256}, got {actual}. The download was discarded."
            )
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    stat = final.stat()
    _VERIFIED[(str(final.resolve()), stat.st_mtime_ns, stat.st_size)] = entry.sha256
    return final
