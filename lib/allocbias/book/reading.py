"""How a built page of the book reads: the share of visible code, findings first, nothing cut off on the right.

The book's chapters are notebooks, and a notebook's plumbing (imports, glue calls, checks) is code a reader does
not need. These functions measure a page of the built HTML book (jupyter-book 1.x, myst-nb) as a reader sees it:

- :func:`visible_code_share`: characters of code-cell input a reader sees without opening a toggle, over all the
  characters of the article's text. Removed cells are not in the HTML; a ``hide-input`` cell's source sits inside a
  closed ``<details>`` element and is not counted as visible.
- :func:`findings_first`: whether the page opens with the findings admonition before its first section.
- :func:`horizontal_overflow`: runs headless Chromium on a copy of the page with a measuring script injected, and
  returns the elements whose right edge passes the article column (and is not inside a box that scrolls), and
  every table wider than the text column (a table that scrolls sideways hides its right-hand columns);
  :func:`horizontal_overflows` measures many pages at once, each in a frame of the window's size in one Chromium.

Only the standard library is used to read HTML, so the measures run wherever the book builds. The module is
part of :mod:`allocbias.book` (it was in the study): it reads pages, not findings.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

__all__ = ["PageReading", "findings_first", "glued_sentences", "horizontal_overflow", "horizontal_overflows", "read_page", "reliability_word_problems",
           "visible_code_share", "word_problems"]

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Reader(HTMLParser):
    """Counts the article's text characters, and those inside code-cell inputs that are not in a closed toggle."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, set[str]]] = []
        self.in_article = 0  # depth of the article element on the stack, 0 when outside
        self.text = 0
        self.code = 0
        self.events: list[str] = []  # "findings" and "h2" in document order, inside the article

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        if tag == "article" and "bd-article" in classes and not self.in_article:
            self.in_article = len(self.stack) + 1
        if self.in_article:
            if "admonition-findings" in classes:
                self.events.append("findings")
            if tag == "h2":
                self.events.append("h2")
        if tag not in _VOID:
            self.stack.append((tag, classes))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break
        if self.in_article and len(self.stack) < self.in_article:
            self.in_article = 0

    def handle_data(self, data: str) -> None:
        if not self.in_article:
            return
        if any(tag in ("script", "style") for tag, _ in self.stack):
            return
        n = len("".join(data.split()))  # characters a reader sees, without layout whitespace
        self.text += n
        in_input = any("cell_input" in classes for _, classes in self.stack)
        hidden = any(tag == "details" for tag, _ in self.stack)
        if in_input and not hidden:
            self.code += n


class PageReading(dict):
    """``text`` (characters of the article), ``code`` (visible code-input characters), ``share``, ``findings_first``."""


def read_page(html: str) -> PageReading:
    """Read one built page.

    >>> page = ('<article class="bd-article"><h1>T</h1><p>abcdef</p>'
    ...         '<div class="cell"><div class="cell_input"><pre>x = 1</pre></div></div>'
    ...         '<details><div class="cell_input"><pre>hidden()</pre></div></details></article>')
    >>> r = read_page(page)
    >>> r["text"], r["code"], round(r["share"], 3)
    (18, 3, 0.167)
    """
    reader = _Reader()
    reader.feed(html)
    reader.close()
    if reader.text == 0:
        raise ValueError("no text inside <article class=\"bd-article\">: is this a page of a jupyter-book build?")
    events = reader.events
    first = events.index("findings") if "findings" in events else None
    return PageReading(text=reader.text, code=reader.code, share=reader.code / reader.text,
                       findings_first=first is not None and "h2" not in events[:first])


def visible_code_share(html: str) -> float:
    """Visible code-input characters over all text characters of the page's article.

    >>> visible_code_share('<article class="bd-article"><p>abc</p><div class="cell_input">d</div></article>')
    0.25
    """
    return read_page(html)["share"]


def findings_first(html: str) -> bool:
    """Whether a findings admonition comes before the first ``h2`` section of the page.

    >>> findings_first('<article class="bd-article"><h1>T</h1><div class="admonition-findings admonition">'
    ...                '<p>x</p></div><section><h2>Overview</h2></section></article>')
    True
    >>> findings_first('<article class="bd-article"><h1>T</h1><section><h2>Overview</h2></section>'
    ...                '<div class="admonition-findings admonition"><p>x</p></div></article>')
    False
    """
    return read_page(html)["findings_first"]


# After the page has laid out (MathJax included), list every element of the article whose right edge passes the
# article's, unless a box between them scrolls or clips horizontally and itself stays inside the article. A cell
# tagged full-width (the book's figures) may pass the article column into the margin, never the window.
_MEASURE = """
<script>
window.addEventListener('load', function () { setTimeout(function () {
  var art = document.querySelector('article.bd-article') || document.body;
  var limit = art.getBoundingClientRect().right + 1;
  var out = {viewport: document.documentElement.clientWidth, scrollWidth: document.documentElement.scrollWidth,
             article_right: limit - 1, offenders: []};
  var windowLimit = document.documentElement.clientWidth + 1;
  var all = art.querySelectorAll('*');
  for (var i = 0; i < all.length; i++) {
    var el = all[i], r = el.getBoundingClientRect();
    var lim = el.closest('.tag_full-width, .full-width') ? windowLimit : limit;
    if (r.width === 0 || r.right <= lim) continue;
    var p = el.parentElement, boxed = false;
    while (p && p !== art) {
      var s = getComputedStyle(p);
      if ((s.overflowX === 'auto' || s.overflowX === 'scroll' || s.overflowX === 'hidden')
          && p.getBoundingClientRect().right <= lim) { boxed = true; break; }
      p = p.parentElement;
    }
    if (boxed) continue;
    var inner = false;  // report the outermost offender only
    for (var j = 0; j < out.offenders.length; j++) { if (out.offenders[j].el.contains(el)) { inner = true; break; } }
    if (!inner) out.offenders.push({el: el, right: Math.round(r.right)});
  }
  // key columns (verdicts, flags) past the visible right edge of their scrolling box, and how far each figure is
  // shrunk (displayed width over drawn width: legends drawn at 11 pt read under 9 pt below about 0.78)
  out.hidden_keys = []; out.figures = [];
  var keyWords = /verdict|flag|four.fifths|below 0\\.8/i;
  var heads = art.querySelectorAll('table th');
  for (var h = 0; h < heads.length; h++) {
    var th = heads[h], text = (th.textContent || '').trim();
    if (!keyWords.test(text)) continue;
    var box = th.parentElement, right = limit;
    while (box && box !== art) {
      var cs = getComputedStyle(box);
      if (cs.overflowX === 'auto' || cs.overflowX === 'scroll' || cs.overflowX === 'hidden') {
        right = Math.min(limit, box.getBoundingClientRect().right + 1); break;
      }
      box = box.parentElement;
    }
    var tr = th.getBoundingClientRect();
    if (tr.right > right) out.hidden_keys.push('"' + text.slice(0, 40) + '" right=' + Math.round(tr.right)
                                               + ' visible to ' + Math.round(right - 1));
  }
  // every table wider than the article's text column (all of it, not only its key columns): the table's right
  // edge past the column, whether or not a box around it scrolls; with the headers that lie out of view
  out.wide_tables = [];
  var colRight = art.getBoundingClientRect().right - parseFloat(getComputedStyle(art).paddingRight || 0) + 1;
  var tables = art.querySelectorAll('table');
  for (var t = 0; t < tables.length; t++) {
    var tb = tables[t], rb = tb.getBoundingClientRect(), w = Math.max(rb.width, tb.scrollWidth);
    if (rb.width === 0 || rb.left + w <= colRight) continue;  // a table that scrolls in itself is as wide as its content
    var ths = tb.querySelectorAll('thead th, tr:first-child th'), cut = [];
    for (var q = 0; q < ths.length; q++) {
      if (ths[q].getBoundingClientRect().right > colRight) cut.push((ths[q].textContent || '').trim().slice(0, 30));
    }
    var cap = tb.querySelector('caption'), head = (cap ? cap.textContent : '') || (ths.length ? ths[0].textContent : '');
    out.wide_tables.push({width: Math.round(w), column: Math.round(colRight - rb.left - 1),
                          headers_out_of_view: cut.length, first: (head || '').trim().replace(/\\s+/g, ' ').slice(0, 50),
                          cut: cut.slice(0, 4)});
  }
  // where the page's first admonition ends (the landing page's main result must end within the first screen)
  var adm = art.querySelector('.admonition');
  out.first_admonition_bottom = adm ? Math.round(adm.getBoundingClientRect().bottom + window.scrollY) : null;
  var imgs = art.querySelectorAll('.cell_output img');
  for (var m = 0; m < imgs.length; m++) {
    var im = imgs[m];
    if (!im.naturalWidth) continue;
    out.figures.push({src: (im.getAttribute('src') || '').split('/').pop().slice(0, 60),
                      scale: Math.round(1000 * im.getBoundingClientRect().width / im.naturalWidth) / 1000});
  }
  out.offenders = out.offenders.map(function (o) {
    var text = (o.el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 60);
    return o.el.tagName.toLowerCase() + '.' + String(o.el.className).split(' ').slice(0, 2).join('.')
           + ' right=' + o.right + ' "' + text + '"';
  });
  document.body.setAttribute('data-overflow', JSON.stringify(out));
}, 2000); });
</script>
"""


def chromium() -> str | None:
    """The path of a Chromium (or Chrome) executable on ``PATH``, else ``None``."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


# Several pages laid out in one Chromium: each page in an iframe exactly the window's size, all at the window's top
# left corner (so none is off screen, where Chromium would throttle it), polled until each has its measurement.
_FRAMES = """<!DOCTYPE html>
<html><head><style>html, body {margin: 0; padding: 0; overflow: hidden}
iframe {position: absolute; top: 0; left: 0; border: 0; width: %(width)dpx; height: %(height)dpx}</style></head>
<body>%(frames)s<script>
var frames = document.querySelectorAll('iframe');
var timer = setInterval(function () {
  var out = [];
  for (var i = 0; i < frames.length; i++) {
    var doc = null;
    try { doc = frames[i].contentDocument; } catch (e) { doc = null; }
    var got = doc && doc.body && doc.body.getAttribute('data-overflow');
    out.push(got ? JSON.parse(got) : null);
  }
  document.body.setAttribute('data-overflows', JSON.stringify(out));
  if (out.indexOf(null) < 0) clearInterval(timer);
}, 100);
</script></body></html>
"""


def _chromium_dom(browser: str, url: str, width: int, height: int, budget_ms: int, timeout: float,
                  extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Run headless Chromium on ``url`` at ``width`` x ``height`` and return its ``--dump-dom`` run."""
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *extra,
             f"--user-data-dir={profile}", f"--window-size={width},{height}", f"--virtual-time-budget={budget_ms}",
             "--dump-dom", url],
            capture_output=True, text=True, timeout=timeout)


def _attribute(dom: str, name: str) -> object | None:
    import html as _html

    found = re.search(rf'{name}="([^"]*)"', dom)
    return json.loads(_html.unescape(found.group(1))) if found else None


def horizontal_overflows(pages: list[str | Path], width: int = 1280, height: int = 900, *, browser: str | None = None,
                         timeout: float = 120, framed: bool = True, processes: int = 2) -> dict[Path, dict]:
    """Lay each of ``pages`` (built HTML files) out in headless Chromium at ``width`` px; what passes the column.

    Returns, for each page (as a :class:`~pathlib.Path`, in the order given), the measurement that
    :func:`horizontal_overflow` describes. Each page is copied next to itself (so its relative CSS, JS and images
    load) with a measuring script injected. With ``framed`` (the default) each page is laid out in its own iframe
    of ``width`` x ``height`` px, the size of the window a page has alone (checked: a page laid out at another
    width is refused), and the pages are shared out among ``processes`` Chromiums that run at once (one Chromium
    lays all its frames out on one thread). ``framed=False`` launches one Chromium per page, one after the other,
    each page alone in the window: the same measurements, several times slower on a whole book. ``timeout`` is
    the seconds allowed per page. Raises ``RuntimeError`` naming a page when Chromium is missing or returns no
    measurement for it, ``ValueError`` naming a file that is not an HTML page.
    """
    pages = [Path(page) for page in pages]
    if not pages:
        return {}
    browser = browser or chromium()
    if browser is None:
        raise RuntimeError("no Chromium on PATH (apt-get install chromium) to lay out " + ", ".join(map(str, pages)))
    probes: list[Path] = []
    try:
        for page in pages:
            html = page.read_text(encoding="utf-8")
            if "</body>" not in html:
                raise ValueError(f"{page}: no </body>; not an HTML page")
            with tempfile.NamedTemporaryFile("w", suffix=".html", dir=page.parent, prefix=".measure-", delete=False,
                                             encoding="utf-8") as probe:
                probe.write(html.replace("</body>", _MEASURE + "</body>", 1))
            probes.append(Path(probe.name).resolve())
        if not framed:
            out = {}
            for page, probe in zip(pages, probes):
                run = _chromium_dom(browser, probe.as_uri(), width, height, 8000, timeout)
                found = _attribute(run.stdout, "data-overflow")
                if found is None:
                    raise RuntimeError(f"{page}: Chromium returned no measurement (exit {run.returncode}): "
                                       f"{run.stderr[-300:]}")
                out[page] = found
            return out
        shares = [list(range(i, len(pages), max(1, processes))) for i in range(min(len(pages), max(1, processes)))]
        with ThreadPoolExecutor(len(shares)) as pool:
            measured = pool.map(lambda share: _framed([pages[i] for i in share], [probes[i] for i in share], browser,
                                                      width, height, timeout), shares)
            found = {page: result for part in measured for page, result in part.items()}
        return {page: found[page] for page in pages}
    finally:
        for probe in probes:
            probe.unlink(missing_ok=True)


def _framed(pages: list[Path], probes: list[Path], browser: str, width: int, height: int,
            timeout: float) -> dict[Path, dict]:
    """Every probe in its own iframe of one Chromium (file:// frames are scriptable with
    ``--allow-file-access-from-files``); the measurements, checked to come from a page laid out ``width`` px wide."""
    import html as _html

    frames = "".join(f'<iframe src="{_html.escape(probe.as_uri())}"></iframe>' for probe in probes)
    with tempfile.TemporaryDirectory() as folder:
        harness = Path(folder) / "frames.html"
        harness.write_text(_FRAMES % {"width": width, "height": height, "frames": frames}, encoding="utf-8")
        run = _chromium_dom(browser, harness.as_uri(), width, height, 8000 + 2000 * len(pages), timeout * len(pages),
                            extra=("--allow-file-access-from-files",))
    results = _attribute(run.stdout, "data-overflows") or [None] * len(pages)
    out = {}
    for page, result in zip(pages, results):
        if result is None:
            raise RuntimeError(f"{page}: Chromium returned no measurement (exit {run.returncode}): {run.stderr[-300:]}")
        if result["viewport"] != width:
            raise RuntimeError(f"{page}: laid out {result['viewport']} px wide in its frame, not {width} px")
        out[page] = result
    return out


def horizontal_overflow(page: str | Path, width: int = 1280, height: int = 900, *, browser: str | None = None,
                        timeout: float = 120) -> dict:
    """Lay ``page`` (a built HTML file) out in headless Chromium at ``width`` px and return what passes the column.

    The page is copied next to itself (so its relative CSS, JS and images load) with a measuring script injected;
    Chromium's ``--dump-dom`` returns the DOM after the script ran. Returns ``viewport``, ``scrollWidth`` (wider
    than the viewport: the whole page scrolls sideways), ``article_right``, ``offenders`` (outermost elements
    past the article column, each as ``tag.class right=<px> "text"``), ``hidden_keys`` (table headers of verdict
    or flag columns whose right edge lies past the visible width of their scrolling box, so a reader must scroll
    to see them), ``wide_tables`` (every table wider than the article's text column, scrolling or not: its
    ``width``, the ``column`` width it has, ``headers_out_of_view``, ``first`` (its caption or first header) and
    ``cut``, the first headers out of view), ``first_admonition_bottom`` (where the page's first admonition ends, in
    px from the top of the page; ``None`` without one) and ``figures`` (each output image's ``src`` and ``scale``,
    displayed over drawn width). Raises ``RuntimeError`` naming the page when Chromium is missing or returns no
    measurement. To measure many pages, :func:`horizontal_overflows` lays them all out in one Chromium.
    """
    return horizontal_overflows([page], width, height, browser=browser, timeout=timeout)[Path(page)]


# ---------------------------------------------------------------------------------------------------------------
# The words of the executed prose: glue references replaced by their values, one sentence at a time
# ---------------------------------------------------------------------------------------------------------------
_GLUE_REF = re.compile(r"\{glue(?::text)?\}`([^`]+)`")
_FENCE = re.compile(r"^\s*`{3,}(.*)$")


def _prose(markdown: str) -> str:
    r"""The markdown without its code blocks and display math (fenced ```python, ```, ```{code-cell}, ```{math}), but
    with the text of directives (admonitions, exercises, solutions) kept.

    >>> _prose("a\n```{admonition} T\nb\n```\nc\n```python\nx = 1\n```\nd")
    'a\nb\nc\nd'
    """
    out, stack = [], []
    for line in markdown.split("\n"):
        fence = _FENCE.match(line)
        if fence:
            info = fence.group(1).strip()
            if stack and stack[-1] == "code":
                if not info:
                    stack.pop()
            elif info.startswith("{") and not info.startswith(("{code", "{math")):
                stack.append("directive")
            elif not info and stack:
                stack.pop()
            else:
                stack.append("code")
            continue
        if "code" not in stack:
            out.append(line)
    return "\n".join(out)
#: "reliable" as a word of its own: not "unreliable", not "moderately reliable"
_RELIABLE = re.compile(r"(?<!moderately )\breliable\b", re.I)
_AGREES = re.compile(r"agrees with itself at (?:only )?r = ([−-]?\d+\.\d+)")
#: words that name the size a reliability was measured at
SIZE_WORDS = re.compile(r"\b\d[\d,]*\b[^.;]{0,60}?\b(vacanc|runs?\b|answers?\b|résumés?\b|names?\b|units?\b|per half)",
                        re.I)


def _glued(ref: str, page: str | None, glued: dict[str, dict]) -> tuple[str, str, object]:
    """``(stem, key, value)`` of one glue reference (``key[:fmt]`` on a chapter, ``/build/notebooks/STEM.ipynb::
    key:fmt`` on a book page), its value formatted as the page shows it."""
    if "::" in ref:
        path, ref = ref.split("::", 1)
        stem = Path(path).stem
    else:
        stem = page or ""
    key, _, fmt = ref.partition(":") if ref.count(":") else (ref, "", "")
    value = glued.get(stem, {}).get(key)
    if value is None:
        return stem, key, f"??{key}"
    try:
        text = format(value, fmt) if fmt and fmt != "s" else str(value)
    except (TypeError, ValueError):
        text = str(value)
    return stem, key, text


def glued_sentences(markdown: str, glued: dict[str, dict], *, page: str | None = None) -> list[dict]:
    """The sentences of a page's prose as a reader reads them, each with the glued values it quotes.

    ``glued`` maps a chapter's stem to its glued values; ``page`` is the chapter whose short references
    (``{glue:text}`key```) the markdown holds (``None`` for a book page, whose references name their chapter).
    Code blocks are left out. Returns one dict per sentence: ``text`` (references replaced by their formatted
    values), ``keys`` (``(stem, key)`` quoted) and ``reliabilities``: the numbers it quotes as reliabilities, from
    glued numbers whose key names a reliability (not an interval's end, not a size) and from "agrees with itself
    at r = x" phrases.

    >>> s = glued_sentences("The gap agrees at {glue:text}`x_gap_reliability:.2f`. It is reliable.", {"c": {
    ...     "x_gap_reliability": 0.048}}, page="c")
    >>> [(d["text"], d["reliabilities"]) for d in s]
    [('The gap agrees at 0.05.', [0.048]), ('It is reliable.', [])]
    """
    prose = _prose(markdown)
    out = []
    for block in re.split(r"\n\s*\n|\n\s*[-*] ", prose):
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z(*{])", block):
            keys, values = [], []

            def sub(m: re.Match) -> str:
                stem, key, text = _glued(m.group(1), page, glued)
                keys.append((stem, key))
                value = glued.get(stem, {}).get(key)
                if ("reliab" in key and not re.search(r"_(lo|hi|low|high)(_|$)|for_reliability|word", key)
                        and isinstance(value, (int, float)) and not isinstance(value, bool) and -1 <= value <= 1):
                    values.append(float(value))
                return text

            text = " ".join(_GLUE_REF.sub(sub, sentence).split())
            values += [float(x.replace("−", "-")) for x in _AGREES.findall(text)]
            if text:
                out.append({"text": text, "keys": keys, "reliabilities": values})
    return out


def reliability_word_problems(sentences: list[dict]) -> list[str]:
    """Sentences that call a gap "reliable" against the book's words (issue 39): "reliable" (not "unreliable" or
    "moderately reliable") beside a quoted reliability under 0.8 (under 0.5 is "unreliable", 0.5 to 0.8
    "moderately reliable"), and "reliable enough", which says a gap of any reliability may be tested.

    >>> reliability_word_problems([{"text": "ΔDP is reliable enough for a metric to be tested.", "reliabilities": []},
    ...                            {"text": "It is reliable (r = 0.05).", "reliabilities": [0.05]},
    ...                            {"text": "It is unreliable (r = 0.05).", "reliabilities": [0.05]},
    ...                            {"text": "It is reliable (r = 0.85).", "reliabilities": [0.85]}])
    ['"reliable enough": ΔDP is reliable enough for a metric to be tested.', '"reliable" beside a reliability of 0.05: It is reliable (r = 0.05).']
    """
    problems = []
    for s in sentences:
        text = s["text"]
        if re.search(r"\breliable enough\b", text, re.I):
            problems.append(f'"reliable enough": {text[:300]}')
        elif _RELIABLE.search(text) and s["reliabilities"] and min(s["reliabilities"]) < 0.8:
            problems.append(f'"reliable" beside a reliability of {min(s["reliabilities"]):.2f}: {text[:300]}')
    return problems


_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`", re.S)  # math and inline code
_WORD_PROBLEMS = (
    (re.compile(r"[a-z]{3}\(s\)(?![\w(])"), 'a plural written "(s)"'),
    (re.compile(r"(?<![\w.,])(?<!Table )(?<!Figure )1 (points|systems|cells|jobs|tables|models|groups|runs|items|"
                r"vacancies|answers)\b"),
     "one of a plural noun"),
    (re.compile(r"(?<![\w-])nan(?![\w-])"), '"nan" for a value that does not exist'),
    (re.compile(r"(?<![\w.])[−-]0\.0+(?!\d*[1-9])\b"), 'a negative zero ("-0.00")'),
    # a whole number of four digits or more written without thousands separators ("1615 of the 2977"); a year
    # (1900-2099), a standard's number ("ISO 8601") and a port ("localhost:8000") are not counts
    (re.compile(r"(?<![\w.,:/#−-])(?<!ISO )(?!(?:19|20)\d\d(?!\d))\d{4,}(?![\w,]|\.\d)"),
     "a whole number without thousands separators"),
)


def word_problems(sentences: list[dict]) -> list[str]:
    """Sentences (of :func:`glued_sentences`, math left out) with the words issue 39 forbids: a plural written
    "(s)", "1 points", "nan", "-0.00", a whole number of four digits or more without thousands separators.

    >>> word_problems([{"text": "It read 6 system(s) with $f(s)$."}, {"text": "1 points, r = nan and -0.00."},
    ...                {"text": "1 point, r = 0.00 and f(s)."}, {"text": "In 2023, 1,615 of 2,977 at 0.12345 (ISO 8601)."}])
    ['a plural written "(s)": It read 6 system(s) with .', 'one of a plural noun: 1 points, r = nan and -0.00.', '"nan" for a value that does not exist: 1 points, r = nan and -0.00.', 'a negative zero ("-0.00"): 1 points, r = nan and -0.00.']
    """
    problems = []
    for s in sentences:
        text = _MATH.sub("", s["text"])
        for pattern, what in _WORD_PROBLEMS:
            if pattern.search(text):
                problems.append(f"{what}: {text[:300]}")
    return problems
