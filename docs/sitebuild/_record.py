"""Small copies of the browser check's screenshots, committed under ``docs/screenshots``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: The screenshots kept for the record (names of :data:`sitebuild._browser.PAGES`).
RECORDED: tuple[str, ...] = ("index", "api", "example", "single_cell")


def record_screenshots(results: Iterable[Any], dest: Path | str, *, width: int = 800,
                       colors: int = 128) -> list[Path]:
    """Write reduced copies (``width`` pixels wide, a ``colors``-colour palette) of the
    screenshots of the :data:`RECORDED` pages into ``dest``.

    Parameters
    ----------
    results : iterable of PageCheck
        From :func:`~sitebuild.check_site`.
    dest : path
        Folder (``docs/screenshots``).
    width, colors : int
        Size and palette of the copies.

    Returns
    -------
    list of Path
        The files written.
    """
    from PIL import Image

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for check in results:
        if check.name not in RECORDED or check.screenshot is None:
            continue
        with Image.open(check.screenshot) as img:
            img = img.convert("RGB")
            height = round(img.height * width / img.width)
            small = img.resize((width, height), Image.Resampling.LANCZOS)
            small = small.quantize(colors=colors, method=Image.Quantize.MEDIANCUT)
            path = dest / f"{check.name}.png"
            small.save(path, optimize=True)
            written.append(path)
    return written
