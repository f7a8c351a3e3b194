"""The built site, looked at in a real browser: headless Chromium renders pages and reports.

:func:`check_site` serves the HTML folder on the loopback interface, opens each page in
headless Chromium (Debian's ``chromium``) with every other host unreachable, and reads back
what the page shows after its scripts ran: images that did not load, math that MathJax did not
typeset, resources requested from other hosts or missing from the site, and, on the search
page, the hits of a query (so the search index loads and answers). It saves a screenshot of
each page.
"""

from __future__ import annotations

import html
import http.server
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The pages the check renders: name -> (path under the HTML folder, what it must show).
#: ``math``: at least one typeset formula; ``images``: at least that many loaded images;
#: ``search``: at least one hit.
PAGES: dict[str, tuple[str, dict[str, int]]] = {
    "index": ("index.html", {}),
    "api": ("api/generated/sparsefs.selection.StabilitySelector.html", {"math": 1}),
    "example": ("auto_examples/plot_stability_selection.html", {"images": 1, "math": 1}),
    "single_cell": ("single_cell.html", {"images": 1}),
    "search": ("search.html?q=stability", {"search": 1}),
}

#: Window heights other than the default, in CSS pixels: the example's figure is well below
#: the fold.
HEIGHTS: dict[str, int] = {"example": 2600}

#: Chromium's flags: headless, no sandbox (root in a container), nothing that reaches out
#: (updates, sync, metrics), a fresh profile per run, and every host but the loopback unknown.
CHROMIUM_FLAGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
    "--mute-audio",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)

_MARK = "__sparsefs_check"

#: Injected into the served copy of a page (never into the files): waits for the page and
#: MathJax, then writes what it found into a <pre> element that --dump-dom returns.
_PROBE = r"""
<script>
(function () {
  function report(extra) {
    var imgs = Array.prototype.slice.call(document.images);
    var broken = imgs.filter(function (i) { return !i.complete || i.naturalWidth === 0; })
                     .map(function (i) { return i.getAttribute("src"); });
    var math = document.querySelectorAll("span.math, div.math");
    var typeset = 0;
    math.forEach(function (m) { if (m.querySelector("mjx-container")) { typeset += 1; } });
    var external = [];
    document.querySelectorAll("script[src], link[rel=stylesheet][href], img[src], iframe[src]")
      .forEach(function (el) {
        var url = new URL(el.getAttribute("src") || el.getAttribute("href"), location.href);
        if (url.origin !== location.origin && url.protocol !== "data:") { external.push(url.href); }
      });
    var out = {
      title: document.title,
      h1: (document.querySelector("h1") || {}).textContent || "",
      images: imgs.length, broken_images: broken,
      math: math.length, math_typeset: typeset,
      math_errors: document.querySelectorAll("mjx-merror, .MathJax_Error").length,
      mathjax: typeof window.MathJax !== "undefined",
      external: external,
      search_hits: document.querySelectorAll("#search-results li, ul.search li").length,
      search_summary: ((document.querySelector("#search-results p, .search-summary") || {})
                       .textContent || "").trim()
    };
    for (var k in extra) { out[k] = extra[k]; }
    var pre = document.createElement("pre");
    pre.id = "sparsefs-check";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  function waitSearch(n) {
    var searching = /search\.html/.test(location.pathname);
    var done = document.querySelector("#search-results p, .search-summary");
    if (!searching || (done && done.textContent.trim()) || n > 100) { report({}); return; }
    setTimeout(function () { waitSearch(n + 1); }, 100);
  }
  window.addEventListener("load", function () {
    var ready = (window.MathJax && MathJax.startup && MathJax.startup.promise)
      ? MathJax.startup.promise : Promise.resolve();
    ready.then(function () { waitSearch(0); },
               function (e) { report({mathjax_failed: String(e)}); });
  });
})();
</script>
"""


@dataclass
class PageCheck:
    """What the browser showed for one page.

    Attributes
    ----------
    name : str
        The key in :data:`PAGES`.
    path : str
        The page, relative to the HTML folder.
    problems : list of str
        Empty when the page rendered as required.
    report : dict
        What the probe read from the rendered page (images, math, search hits, ...).
    missing : list of str
        Requests of the page that the site could not serve (404).
    screenshot : Path or None
        The PNG, when one was taken.
    """

    name: str
    path: str
    problems: list[str] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    screenshot: Path | None = None

    @property
    def ok(self) -> bool:
        """Whether the page rendered as required."""
        return not self.problems


def find_chromium() -> str | None:
    """The Chromium (or Chrome) executable on the PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the site; injects the probe into pages asked for with the marker; logs 404s."""

    log: list[tuple[str, int]]

    def log_message(self, format: str, *args: Any) -> None:
        return  # requests are recorded in send_response, not printed

    def send_response(self, code: int, message: str | None = None) -> None:
        self.log.append((self.path, code))
        super().send_response(code, message)

    def do_GET(self) -> None:
        parsed = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(parsed.query)
        if _MARK in query and parsed.path.endswith(".html"):
            file = Path(self.translate_path(parsed.path))
            if file.is_file():
                text = file.read_text(encoding="utf-8")
                body = text.replace("</body>", _PROBE + "</body>", 1).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
        super().do_GET()


class _Server:
    """A loopback HTTP server for the site, in a thread."""

    def __init__(self, root: Path) -> None:
        log: list[tuple[str, int]] = []
        handler = type("Handler", (_Handler,), {"log": log})

        def factory(*args: Any, **kwargs: Any) -> _Handler:
            return handler(*args, directory=str(root), **kwargs)

        self.log = log
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), factory)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def __enter__(self) -> _Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _chromium(binary: str, args: list[str], profile: Path, timeout: float) -> str:
    cmd = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                         env={**os.environ, "LANG": "C.UTF-8"})
    return out.stdout


def _with_mark(url: str) -> str:
    return url + ("&" if "?" in url else "?") + f"{_MARK}=1"


def _problems(name: str, need: dict[str, int], report: dict[str, Any],
              missing: list[str]) -> list[str]:
    found = []
    if not report:
        return ["the page did not finish loading (no report from the probe)"]
    if report.get("broken_images"):
        found.append(f"images not shown: {report['broken_images']}")
    if report.get("images", 0) - len(report.get("broken_images", [])) < need.get("images", 0):
        found.append(f"{report.get('images', 0)} images, {need['images']} expected")
    if report.get("math", 0) != report.get("math_typeset", 0):
        found.append(f"math not typeset: {report['math_typeset']} of {report['math']}")
    if report.get("math_errors"):
        found.append(f"{report['math_errors']} MathJax errors")
    if need.get("math") and report.get("math_typeset", 0) < need["math"]:
        found.append("no typeset math on a page that has formulas")
    if report.get("mathjax_failed"):
        found.append(f"MathJax failed: {report['mathjax_failed']}")
    if report.get("external"):
        found.append(f"resources from other hosts: {report['external']}")
    if need.get("search") and report.get("search_hits", 0) < need["search"]:
        found.append(f"search found nothing ({report.get('search_summary')!r})")
    if missing:
        found.append(f"requests the site could not serve: {missing}")
    return found


def check_site(html_dir: Path | str, out_dir: Path | str, *,
               pages: dict[str, tuple[str, dict[str, int]]] | None = None,
               chromium: str | None = None, width: int = 1280, height: int = 1600,
               timeout: float = 90) -> list[PageCheck]:
    """Render pages of the built site in headless Chromium and check what they show.

    Parameters
    ----------
    html_dir : path
        The built HTML (``docs/_build/html``).
    out_dir : path
        Where the screenshots (``<name>.png``) and ``report.json`` are written.
    pages : dict, optional
        Default :data:`PAGES`.
    chromium : str, optional
        The browser; default :func:`find_chromium`.
    width, height : int
        The window, in CSS pixels (:data:`HEIGHTS` for some pages); the screenshot is of the
        window.
    timeout : float
        Seconds allowed to one browser run.

    Returns
    -------
    list of PageCheck
        One per page, in order.

    Raises
    ------
    FileNotFoundError
        When there is no built site or no Chromium.
    """
    html_dir, out_dir = Path(html_dir), Path(out_dir)
    if not (html_dir / "index.html").is_file():
        raise FileNotFoundError(f"no built site in {html_dir} (build it first)")
    binary = chromium or find_chromium()
    if binary is None:
        raise FileNotFoundError("no chromium on the PATH (Debian: apt-get install chromium)")
    out_dir.mkdir(parents=True, exist_ok=True)
    pages = PAGES if pages is None else pages
    results = []
    with _Server(html_dir) as server, tempfile.TemporaryDirectory() as tmp:
        for name, (path, need) in pages.items():
            check = PageCheck(name, path)
            profile = Path(tmp) / name  # a fresh profile for every page
            start = len(server.log)
            dom = _chromium(binary, ["--virtual-time-budget=20000", "--dump-dom",
                                     _with_mark(server.base + path)], profile / "a", timeout)
            m = re.search(r'<pre id="sparsefs-check"[^>]*>(.*?)</pre>', dom, re.S)
            check.report = json.loads(html.unescape(m.group(1))) if m else {}
            check.missing = sorted({p for p, code in server.log[start:]
                                    if code >= 400 and not p.startswith("/favicon.ico")})
            check.problems = _problems(name, need, check.report, check.missing)
            shot = out_dir / f"{name}.png"
            shot.unlink(missing_ok=True)
            size = f"--window-size={width},{HEIGHTS.get(name, height)}"
            _chromium(binary, ["--virtual-time-budget=20000", size,
                               f"--screenshot={shot}", server.base + path], profile / "b",
                      timeout)
            if shot.is_file():
                check.screenshot = shot
            else:
                check.problems.append("no screenshot was written")
            results.append(check)
    summary = [{"name": c.name, "path": c.path, "ok": c.ok, "problems": c.problems,
                "report": c.report, "missing": c.missing,
                "screenshot": c.screenshot.name if c.screenshot else None} for c in results]
    (out_dir / "report.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return results
