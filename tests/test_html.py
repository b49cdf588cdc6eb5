"""The HTML report (results/report/): deterministic bytes without machine paths or times, the
statements, tables and provenance of the files it is built from; the quantile benchmark's page
(its tables, interval table and rank figure from fake rows, the same bytes from the same rows,
"has not run" without rows); then the committed report in a
real browser (headless Chromium through Selenium and the system's chromedriver): no console
error, a drawn page, every internal link and anchor resolving, and the filters showing the
statements claims.csv and the registry say they should.

Without Chromium, chromedriver or Selenium the browser tests are skipped with the reason;
``PROXBOOST_REQUIRE_BROWSER=1`` (set by .ci/run) turns that skip into a failure.
"""

from __future__ import annotations

import html
import io
import math
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("jinja2", reason="the HTML report needs jinja2 (the experiments extra)")

from proxboost.experiments.claims import STATEMENTS, families  # noqa: E402
from proxboost.experiments.report import html as html_report  # noqa: E402
from proxboost.experiments.report import summary as report
from proxboost.experiments.store.results import load, provenance, write_row  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "results" / "report"
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d")
MACHINE_PATH = re.compile(r"file:|(?<![\w.])/(?:home|work|tmp|root|usr|var|Users|private)/")


# =====================================================================================
# small stored results
# =====================================================================================
def _store(results):
    """Rows of a regression and a classification dataset, with the provenance columns (commit,
    library versions, creation time) a run writes; returns their creation times."""
    rng = np.random.default_rng(0)
    rows = []
    for ds, losses, task in (("crabs", ("ls", "lad"), "regression"), ("spam", ("hinge",), "c")):
        for loss in losses:
            for algo in ("gradient", "prox", "residual_prox", "random_forest"):
                for k in range(8):
                    rf = algo == "random_forest"
                    rows.append(
                        dict(
                            protocol="paper/20splits/T1000",
                            dataset=ds,
                            loss=loss,
                            algo=algo,
                            split=k,
                            engine="none" if rf else "exact",
                            task="regression" if task == "regression" else "classification",
                            test_loss=math.nan
                            if rf and task != "regression"
                            else rng.uniform(1, 2),
                            test_error=math.nan if task == "regression" else rng.uniform(0, 0.1),
                            fit_seconds=1.0,
                        )
                    )
    for r in rows:
        write_row(results, {**r, **provenance(), "identity": {"algo": r["algo"]}})
    report.main(["--results", str(results)])  # claims.csv and SUMMARY.md, as make figures does
    return set(load(results)["created"])


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _build(base: Path, results_src: Path) -> dict[str, bytes]:
    """Copy the stored results under ``base`` (with a figures/ folder beside) and build there."""
    results = base / "results"
    shutil.copytree(results_src, results)
    (base / "figures").mkdir()
    (base / "figures" / "claims.png").write_bytes(b"\x89PNG stand-in")
    html_report.main(
        [
            "--results",
            str(results),
            "--figures",
            str(base / "figures"),
            "--out",
            str(results / "report"),
        ]
    )
    return _tree(results / "report")


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """(stored results folder, the creation times of its rows); claims.csv and SUMMARY.md made."""
    path = tmp_path_factory.mktemp("stored") / "results"
    return path, _store(path)


@pytest.fixture(scope="module")
def built(tmp_path_factory, stored):
    """(where it was built, {file: bytes}) of the report of :func:`stored`."""
    base = tmp_path_factory.mktemp("built")
    return base, _build(base, stored[0])


@pytest.mark.slow
def test_rebuilding_gives_the_same_bytes_with_no_machine_path_or_time(tmp_path, stored, built):
    base, a = built
    b = _build(tmp_path / "deeper" / "b", stored[0])  # another absolute place
    assert a == b
    assert {"index.html", "style.css", "report.js", "dataset-crabs.html", "fig/spam.svg"} <= set(a)
    assert a["figures/claims.png"] == (base / "figures" / "claims.png").read_bytes()  # a copy
    assert a["claims.csv"] == (base / "results" / "claims.csv").read_bytes()
    html_report.main(["--results", str(base / "results"), "--figures", str(base / "figures")])
    assert _tree(base / "results" / "report") == a  # rebuilt in place: nothing changes or is added
    for name, data in a.items():
        if name.endswith(".png") or name in ("claims.csv", "SUMMARY.md"):
            continue  # copies of the inputs as they are
        text = data.decode("utf-8")
        assert str(base) not in text and str(tmp_path) not in text, name
        assert not MACHINE_PATH.search(text), name
        # the criteria page is docs/claims.md, which dates its own amendments
        assert name == "criteria.html" or not TIMESTAMP.search(text), name
        assert not any(c in text for c in stored[1]), name  # the rows' own creation times
    assert "<dc:date>" not in a["fig/spam.svg"].decode()


@pytest.mark.slow
def test_build_does_not_depend_on_the_order_of_the_rows(classification_rows, curve_frame):
    rows = classification_rows(n_splits=6)
    rows["commit"] = ["c0ffee", "beef00"] * (len(rows) // 2)
    curves = pd.concat(
        [
            curve_frame("intro", "lad", "gradient", 2, np.linspace(1, 0.5, 11), seed=s)
            for s in (0, 1)
        ]
    )
    claims = pd.DataFrame(
        {"id": list(STATEMENTS), "scope": "all", "verdict": "inconclusive", "numbers": "n"}
    )
    claims = html_report.read_claims(io.StringIO(claims.to_csv(index=False)))
    summary = "# Results summary\n\n## Real-world datasets\n\nΔ.\n\n### spam\n\ntext\n"
    a = html_report.build_report(summary, claims, curves, rows)
    b = html_report.build_report(
        summary, claims, curves.sample(frac=1, random_state=0), rows.sample(frac=1, random_state=1)
    )
    assert a == b
    prov = a["provenance.html"].decode()
    assert "<code>beef00</code>" in prov and "<code>c0ffee</code>" in prov


# =====================================================================================
# what the pages say
# =====================================================================================
class _Page(HTMLParser):
    """Statements (details.statement with their data attributes), table rows and ids of a page."""

    def __init__(self):
        super().__init__()
        self.statements, self.rows, self.ids = {}, [], set()
        self._row, self._cell = None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "details" and "statement" in a.get("class", ""):
            self.statements[a["id"]] = (a["data-verdict"], a["data-family"])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


def _md_rows(section: str) -> list[list[str]]:
    """The cells of a Markdown section's table rows as a reader sees them (marks dropped)."""
    out = []
    for line in section.splitlines():
        if line.startswith("|") and not re.match(r"^\|(\s*-+\s*\|)+$", line):
            cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
            out.append(
                [" ".join(re.sub(r"\*\*|`", "", c.replace("\\|", "|")).split()) for c in cells]
            )
    return out


def test_statements_verdicts_and_families_are_those_of_claims_csv_and_the_registry(stored, built):
    files = built[1]
    page = _parse(files["index.html"].decode())
    claims = pd.read_csv(stored[0] / "claims.csv", dtype=str, keep_default_na=False)
    top = claims[claims["scope"] == "all"].set_index("id")["verdict"]
    family = {sid: name for name, ids in families() for sid in ids}
    assert page.statements == {f"s-{sid}": (top[sid], family[sid]) for sid in STATEMENTS}
    # every table row of the dataset's SUMMARY.md section is a row of its page, cell for cell
    summary = (stored[0] / "SUMMARY.md").read_text()
    crabs = summary[summary.index("### crabs") :].split("\n### ")[0].split("\n## ")[0]
    expected = _md_rows(crabs)
    assert len(expected) > 5
    shown = _parse(files["dataset-crabs.html"].decode()).rows
    assert all(row in shown for row in expected), [r for r in expected if r not in shown]
    # the verdict cells of the page are the claims.csv rows whose scope names the dataset
    cells = claims[claims["scope"].str.contains(r"(?:^|;)dataset=crabs(?:;|$)")]
    listed = [r for r in shown if r and r[0] in STATEMENTS]
    assert [(r[0], r[2]) for r in listed] == list(zip(cells["id"], cells["verdict"]))


def test_the_index_says_which_verdicts_survive_the_corrected_test(stored, built):
    claims = pd.read_csv(stored[0] / "claims.csv", dtype=str, keep_default_na=False)
    second = claims[claims["scope"].str.startswith("test=corrected t-test")]
    assert len(second)  # 6c has lad rows of crabs here
    page = _parse(built[1]["index.html"].decode())
    for _, r in second.iterrows():
        top = claims[(claims["id"] == r["id"]) & (claims["scope"] == "all")]["verdict"].iloc[0]
        want = [r["id"], "headline", top, r["verdict"], "yes" if top == r["verdict"] else "no"]
        assert any(row[:5] == want for row in page.rows), want
    text = built[1]["index.html"].decode()
    assert 'id="corrected"' in text and "verdicts survive the corrected test" in text
    rows = html_report.corrected_rows(claims.assign(verdict="confirmed"))["rows"]
    assert rows and all(r["survives"] for r in rows)


def test_provenance_is_read_from_the_rows(stored, built):
    rows = _parse(built[1]["provenance.html"].decode()).rows
    stored = load(stored[0])
    commits = {r[0]: r[1] for r in rows if len(r) == 4 and r[0] != "commit"}
    assert commits == {c: str(n) for c, n in stored["commit"].value_counts().items()}
    libraries = {r[0]: r[1] for r in rows if len(r) == 3 and r[0] != "library"}
    assert libraries["numpy"] == f"{stored['numpy_version'].iloc[0]} ({len(stored)})"


@pytest.mark.slow
def test_extra_claims_columns_are_shown_and_stale_pages_removed(tmp_path, stored):
    shutil.copytree(stored[0], tmp_path / "r")
    path = tmp_path / "r" / "claims.csv"
    claims = pd.read_csv(path, dtype=str, keep_default_na=False)
    claims["reading"] = [f"reading {i}" for i in range(len(claims))]
    claims.to_csv(path, index=False)
    out = tmp_path / "r" / "report"
    out.mkdir()
    (out / "dataset-gone.html").write_text("an earlier report's page")
    (out / "notes.txt").write_text("not the report's")
    html_report.main(["--results", str(tmp_path / "r"), "--figures", str(tmp_path / "none")])
    index = (out / "index.html").read_text()
    cell = int(np.flatnonzero(claims["scope"] != "all")[-1])
    assert "<th>reading</th>" in index and f"<td>reading {cell}</td>" in index  # a cell's
    assert "<dt>reading</dt><dd>reading 0</dd>" in index  # a statement's own row
    assert not (out / "dataset-gone.html").exists() and (out / "notes.txt").exists()
    assert "is not drawn yet" in index  # no figures/ folder: said, not linked


def test_markdown_is_escaped_and_tables_keep_escaped_bars():
    out = html_report.markdown_html(
        "| a \\| b | `x_y*z*` |\n|---|---|\n| <script> | residual_prox **bold** |\n\n_all in em_"
    )
    assert "<th>a | b</th>" in out and "<code>x_y*z*</code>" in out
    assert "&lt;script&gt;" in out and "<script>" not in out
    assert "residual_prox <strong>bold</strong>" in out and "<p><em>all in em</em></p>" in out


def test_a_missing_summary_is_one_line_naming_the_command(tmp_path, capsys):
    (tmp_path / "claims.csv").write_text("id,scope,verdict\n")
    with pytest.raises(SystemExit) as exc:
        html_report.main(["--results", str(tmp_path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "SUMMARY.md not found" in err and "python -m proxboost.report" in err
    (tmp_path / "SUMMARY.md").write_text("# Results summary\n")
    (tmp_path / "claims.csv").write_text("id,scope\n1a,all\n")
    with pytest.raises(SystemExit):
        html_report.main(["--results", str(tmp_path)])
    assert "no column verdict" in capsys.readouterr().err
    assert not (tmp_path / "report").exists()  # nothing written


def test_the_committed_report_shows_the_committed_verdicts():
    """results/report/ was rebuilt after results/claims.csv last changed (`make figures`)."""
    page = _parse((COMMITTED / "index.html").read_text(encoding="utf-8"))
    claims = pd.read_csv(REPO / "results" / "claims.csv", dtype=str, keep_default_na=False)
    top = claims[claims["scope"] == "all"].set_index("id")["verdict"]
    shown = {k.removeprefix("s-"): v for k, (v, _) in page.statements.items()}
    assert shown == top.to_dict(), "results/report/ is older than results/claims.csv: make figures"


# =====================================================================================
# the quantile benchmark's page
# =====================================================================================
def _benchmark_frame(seed=0) -> pd.DataFrame:
    """Stored rows of the quantile benchmark (reading benchmark15, 3 datasets, 3 methods, 4
    splits, lad), its intervals (2 datasets) and a row of another experiment."""
    rng = np.random.default_rng(seed)
    rows = []
    for ds in ("a", "b", "c"):
        for algo in ("prox", "gradient", "lightgbm"):
            for k in range(4):
                rows.append(
                    dict(protocol="benchmark15/4splits/T1000", dataset=ds, loss="lad", algo=algo,
                         split=k, test_loss=rng.uniform(1, 2))
                )  # fmt: skip
                if ds == "c":
                    continue
                rows.append(
                    dict(protocol="benchmark15/4splits/T1000", dataset=ds, algo=algo, split=k,
                         loss="pinball-tau0.05-0.95", test_loss=1.0, interval_nominal=0.9,
                         coverage_raw=rng.uniform(0.8, 0.9), coverage_calibrated=0.91,
                         width_raw=rng.uniform(1, 2), width_calibrated=rng.uniform(1, 2),
                         n_calibration=99, crossing_raw=0.0, crossing_calibrated=0.0)
                )  # fmt: skip
    rows.append(dict(protocol="paper/20splits/T1000", dataset="a", loss="lad", algo="prox",
                     split=0, test_loss=1.0))  # fmt: skip
    return pd.DataFrame(rows)


def _benchmark_html(context) -> str:
    env = html_report._environment()
    return env.get_template("benchmark.html").render(
        page="benchmark.html", title="The quantile benchmark", nav=[], results_name="results",
        attachments=[], criteria_page="", **context,
    )  # fmt: skip


def test_the_benchmark_page_shows_its_tables_and_rank_figure_from_the_rows():
    from proxboost.experiments.report import benchmark

    rows = _benchmark_frame()
    context, files = html_report.benchmark_page(rows)
    assert context["ran"] and not context["error"]
    titles = [s["title"] for s in context["sections"]]
    assert titles == [
        "Status",  # partial here: a few fake runs of the planned sweep
        "15 configurations per method (`benchmark15`)",
        "90 configurations per method (`benchmark90`)",
        "Intervals (90 %, τ = 0.05 / 0.95)",
    ]
    assert list(files) == [html_report.BENCHMARK_FIGURE] == [context["figure"]]
    svg = files[html_report.BENCHMARK_FIGURE].decode()
    assert svg.lstrip().startswith("<?xml") and "<dc:date>" not in svg
    text = _benchmark_html(context)
    page = _parse(text)
    # the tables are those of the benchmark's markdown, the interval rows not among them
    expected = _md_rows(benchmark.markdown(benchmark.benchmark_rows(rows)))
    intervals = _md_rows(benchmark.interval_markdown(benchmark.interval_rows(rows)))
    assert page.rows == expected + intervals
    assert ["a", "prox", "4", "99"] == intervals[1][:4] and len(intervals) == 1 + 2 * 3
    refs = _refs(text)
    assert ("img", html_report.BENCHMARK_FIGURE) in refs.targets
    assert all(not urlsplit(t).scheme for _, t in refs.targets)  # nothing from a network
    assert re.search(r"No figure of the paper", refs.captions[0])
    assert not MACHINE_PATH.search(text) and not TIMESTAMP.search(text)
    # the same rows in another order: the same bytes
    again, again_files = html_report.benchmark_page(rows.sample(frac=1, random_state=3))
    assert again_files == files and _benchmark_html(again) == text


def test_without_benchmark_rows_the_page_says_the_sweep_has_not_run():
    rows = _benchmark_frame()
    paper = rows[rows["protocol"].str.startswith("paper")]
    for real in (paper, pd.DataFrame(), None):
        context, files = html_report.benchmark_page(real)
        assert not context["ran"] and not context["figure"] and files == {}
        text = html.unescape(_benchmark_html(context))
        assert "The quantile benchmark's sweep has not run" in text
        assert "No interval rows are stored yet" in text and "<img" not in text
    # two stored runs of one cell: the page says why, the report is built all the same
    context, files = html_report.benchmark_page(pd.concat([rows, rows.iloc[:1]]))
    assert "two stored runs for" in context["error"] and files == {}
    assert "cannot be tabulated" in _benchmark_html(context)


def test_the_benchmark_page_is_built_and_linked_from_every_page(built):
    files = built[1]
    assert "has not run" in html.unescape(files["benchmark.html"].decode())
    for name in ("index.html", "provenance.html", "benchmark.html"):
        targets = {t for _, t in _refs(files[name].decode()).targets}
        assert "benchmark.html" in targets, name


# =====================================================================================
# the committed report in a real browser
# =====================================================================================
CHROMEDRIVER = "/usr/bin/chromedriver"


def _browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (the test extra: pip install -e '.[test]')"
    if not shutil.which("chromium") or not os.access(CHROMEDRIVER, os.X_OK):
        return (
            "Chromium or its chromedriver is not installed: apt-get install chromium"
            " chromium-driver (Debian; .ci/run does it)"
        )
    return None


def _skip_or_fail(reason: str):
    if os.environ.get("PROXBOOST_REQUIRE_BROWSER") == "1":
        pytest.fail(f"PROXBOOST_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


def _chromium(javascript=True):
    """Headless Chromium through the system's chromedriver (skips, or fails under
    PROXBOOST_REQUIRE_BROWSER=1, when it is missing or does not start); ``javascript=False``
    blocks the pages' scripts (WebDriver's own, as ``is_displayed``, still run)."""
    reason = _browser_missing()
    if reason:
        _skip_or_fail(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    # the system's browser and driver: Selenium Manager would download others (no network)
    options.binary_location = shutil.which("chromium")
    for arg in ("--headless", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if not javascript:
        options.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2}
        )
    try:
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    except Exception as exc:  # the browser is installed but does not start
        _skip_or_fail(f"headless Chromium did not start: {str(exc).splitlines()[0]}")
    driver.set_page_load_timeout(60)
    return driver


@pytest.fixture(scope="module")
def browser():
    driver = _chromium()
    yield driver
    driver.quit()


def _load(driver, path: Path, fragment=""):
    driver.get(path.as_uri() + fragment)
    return driver.get_log("browser")


def _errors(log) -> list[str]:
    return [e["message"] for e in log if e["level"] == "SEVERE"]


@pytest.mark.slow
def test_every_page_loads_without_console_errors_and_every_link_resolves(browser):
    pages = sorted(COMMITTED.glob("*.html"))
    ids, links = {}, {}
    for page in pages:
        errors = _errors(_load(browser, page))
        assert not errors, (page.name, errors)
        ids[page] = set(
            browser.execute_script("return [...document.querySelectorAll('[id]')].map(e => e.id)")
        )
        links[page] = browser.execute_script(
            "return [...document.querySelectorAll('a[href], img[src], link[href], script[src]')]"
            ".map(e => e.href || e.src)"
        )
        broken = browser.execute_script(
            "return [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
            ".map(i => i.src)"
        )
        assert not broken, (page.name, broken)
    reached = set()
    for page, targets in links.items():
        for url in targets:
            parts = urlsplit(url)
            assert parts.scheme == "file", f"{page.name} links outside the report: {url}"
            target = Path(unquote(parts.path))
            assert target.exists(), f"{page.name}: {url} (no such file)"
            if target.suffix == ".html":
                reached.add(target)
            if parts.fragment:
                assert parts.fragment in ids[target], f"{page.name}: {url} (no such anchor)"
    assert reached == set(pages), f"pages no other page links to: {set(pages) - reached}"


@pytest.mark.slow
def test_the_index_is_drawn_and_the_filters_show_the_expected_statements(browser):
    from PIL import Image
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    assert not _errors(_load(browser, COMMITTED / "index.html"))
    shot = np.asarray(Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("L"), float)
    assert shot.shape[0] > 200 and shot.std() > 10, "the screenshot is blank"
    assert (shot < 128).mean() > 0.005, "no text drawn"

    claims = pd.read_csv(REPO / "results" / "claims.csv", dtype=str, keep_default_na=False)
    verdict = claims[claims["scope"] == "all"].set_index("id")["verdict"].to_dict()
    family = {sid: name for name, ids in families() for sid in ids}

    def visible():
        return {
            e.get_attribute("id").removeprefix("s-")
            for e in browser.find_elements(By.CSS_SELECTOR, "details.statement")
            if e.is_displayed()
        }

    assert visible() == set(STATEMENTS)
    for box in browser.find_elements(By.CSS_SELECTOR, 'input[name="verdict"]'):
        if box.get_attribute("value") != "contradicted":
            box.click()
    want = {s for s in STATEMENTS if verdict[s] == "contradicted"}
    assert want and visible() == want
    shown = browser.find_element(By.ID, "shown").text
    assert shown == f"{len(want)} of {len(STATEMENTS)} statements shown"
    Select(browser.find_element(By.ID, "family")).select_by_value("Real world")
    assert visible() == {s for s in want if family[s] == "Real world"}
    Select(browser.find_element(By.ID, "family")).select_by_value("")
    assert visible() == want

    # a statement named in the address opens, whatever the filters
    _load(browser, COMMITTED / "index.html", "#s-6c")
    opened = browser.find_element(By.ID, "s-6c")
    assert opened.get_attribute("open") is not None and opened.is_displayed()
    text = html.unescape(opened.text)
    assert STATEMENTS["6c"].text in text and "Criterion" in text


# =====================================================================================
# a report that stands alone and reads without JavaScript
# =====================================================================================
LINE_REF = re.compile(r"\bl\. ?\d")


class _Refs(HTMLParser):
    """The relative targets of a page (img src, a href, link href, script src) and the captions
    of its figures."""

    def __init__(self):
        super().__init__()
        self.targets, self.captions, self._caption = [], [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if a.get(key) and not a[key].startswith("#"):
                self.targets.append((tag, a[key]))
        if tag == "figcaption":
            self._caption = []

    def handle_endtag(self, tag):
        if tag == "figcaption":
            self.captions.append(" ".join("".join(self._caption).split()))
            self._caption = None

    def handle_data(self, data):
        if self._caption is not None:
            self._caption.append(data)


def _refs(text: str) -> _Refs:
    refs = _Refs()
    refs.feed(text)
    return refs


def _assert_stands_alone(folder: Path):
    """Every image, link, style sheet and script of every page of ``folder`` is a file inside it."""
    images = 0
    for page in sorted(folder.glob("*.html")):
        for tag, target in _refs(page.read_text(encoding="utf-8")).targets:
            assert not urlsplit(target).scheme, (page.name, target)  # no http:, no file:
            path = (folder / unquote(urlsplit(target).path)).resolve()
            assert path.is_relative_to(folder.resolve()), (page.name, target)
            assert path.is_file(), (page.name, target)
            images += tag == "img"
    return images


def test_the_built_report_copied_elsewhere_finds_every_file(tmp_path, built):
    elsewhere = tmp_path / "copied" / "report"
    shutil.copytree(built[0] / "results" / "report", elsewhere)
    assert _assert_stands_alone(elsewhere) > 0


def test_the_committed_report_copied_elsewhere_shows_every_image(tmp_path):
    elsewhere = tmp_path / "report"
    shutil.copytree(COMMITTED, elsewhere)
    assert _assert_stands_alone(elsewhere) >= 50
    for png in (elsewhere / "figures").glob("*.png"):  # the copies are figures/ as it is
        assert png.read_bytes() == (REPO / "figures" / png.name).read_bytes(), png.name


def test_the_inputs_and_the_criteria_are_linked_from_every_page():
    for name in ("claims.csv", "SUMMARY.md"):
        assert (COMMITTED / name).read_bytes() == (REPO / "results" / name).read_bytes(), name
    for page in sorted(COMMITTED.glob("*.html")):
        targets = {t for _, t in _refs(page.read_text(encoding="utf-8")).targets}
        assert {"claims.csv", "SUMMARY.md", "criteria.html"} <= targets, page.name
    criteria = (COMMITTED / "criteria.html").read_text(encoding="utf-8")
    assert "<h3>Verdicts</h3>" in criteria and "<table>" in criteria


def test_paper_references_are_sections_and_quoted_sentences_not_latex_lines(built):
    pages = {n: d.decode() for n, d in built[1].items() if n.endswith(".html")}
    pages |= {p.name: p.read_text(encoding="utf-8") for p in COMMITTED.glob("*.html")}
    for name, text in pages.items():
        assert not LINE_REF.search(html.unescape(text)), (name, LINE_REF.search(text))
    index = html.unescape((COMMITTED / "index.html").read_text(encoding="utf-8"))
    from proxboost.experiments.claims import paper

    assert set(paper.QUOTES) == set(STATEMENTS)
    for sid, st in STATEMENTS.items():
        assert f"“{paper.QUOTES[sid]}”" in index, sid
        assert paper.where(st.paper_line) in index, sid
    assert paper.where("941") == "Section 5.2.1, Regression problems"
    assert paper.sections_for_lines("(l. 854–856), (l. 307)") == "(Section 5.1.2), (Section 2)"
    assert paper.sections_for_lines("l. 822, 828, 960") == "Sections 5.1.1, 5.2.2"


def test_each_figure_names_the_paper_figure_it_redraws():
    captions = []
    for page in sorted(COMMITTED.glob("*.html")):
        captions += _refs(page.read_text(encoding="utf-8")).captions
    assert len(captions) >= 20
    for caption in captions:
        assert re.search(r"Redraws Figure \d of the paper|No figure of the paper", caption), caption
    assert any("Redraws Figure 4 of the paper (Section 5.1.2)" in c for c in captions)


def test_the_baselines_page_opens_on_the_methods_mean_rank_per_dataset():
    text = (COMMITTED / "baselines.html").read_text(encoding="utf-8")
    first = re.search(r'<section id="([^"]+)"', text).group(1)
    assert first == "mean-rank-of-each-method-per-dataset"
    rows = _parse(text.split("</section>")[0]).rows
    assert rows[0][0] == "method" and rows[0][-1] == "all datasets" and len(rows[0]) > 3
    means = [float(r[-1]) for r in rows[1:]]
    assert means == sorted(means) and all(1 <= m <= len(rows) - 1 for m in means)


def test_rank_table_ranks_per_loss_and_split_and_averages():
    from proxboost.experiments.claims.analysis import protocol_units

    rows = pd.DataFrame(
        {
            "protocol": "p",
            "dataset": ["a"] * 6,
            "loss": ["ls"] * 6,
            "split": [0, 0, 0, 1, 1, 1],
            "algo": ["gradient", "prox", "xgboost"] * 2,
            "engine": ["exact", "exact", "none"] * 2,
            "task": "regression",
            "test_loss": [1.0, 2.0, 3.0, 3.0, 2.0, 2.0],
            "test_error": np.nan,
        }
    )
    text = html_report.rank_table(protocol_units(rows))
    got = {r[0]: r[1:] for r in _md_rows(text) if r[0] in ("gradient", "prox", "xgboost")}
    # split 0: 1, 2, 3; split 1: 3, 1.5, 1.5
    assert got == {
        "gradient": ["2.00", "2.00"],
        "prox": ["1.75", "1.75"],
        "xgboost": ["2.25", "2.25"],
    }
    assert html_report.rank_table([]) == ""


def test_unrecorded_versions_say_which_rows_and_why():
    real = pd.DataFrame(
        {
            "protocol": "p",
            "dataset": ["crabs", "crabs", "engel"],
            "engine": ["hist", "exact", "hist"],
            "commit": ["old", "new", "old"],
            "lightgbm_version": [None, "4.7.0", None],
            "numpy_version": "2.0",
        }
    )
    claims = pd.DataFrame({"id": ["1a"], "scope": ["all"], "verdict": ["confirmed"]})
    prov = html_report.provenance(real, pd.DataFrame(), claims)
    (note,) = prov["unrecorded"]
    assert note["library"] == "lightgbm" and note["n"] == 2 and note["commits"] == "old"
    assert note["rows"] == "p crabs hist (1), p engel hist (1)"
    assert "stored before" in note["why"]
    # the committed provenance page explains each "not recorded (n)" it shows
    text = (COMMITTED / "provenance.html").read_text(encoding="utf-8")
    for n in re.findall(r"not recorded \((\d+)\)", text):
        assert re.search(rf"<li><strong>[\w-]+</strong>, {n} [^<]*rows: .+ Why: ", text), n


def test_a_table_too_wide_for_the_page_is_transposed():
    head = "| dataset | " + " | ".join(f"m{i}" for i in range(20)) + " |"
    rule = "|" + "---|" * 21
    rows = [f"| d{k} | " + " | ".join(str(k * 100 + i) for i in range(20)) + " |" for k in range(3)]
    out = _parse(html_report.markdown_html("\n".join([head, rule, *rows])))
    assert out.rows[0] == ["dataset", "d0", "d1", "d2"] and out.rows[1] == ["m0", "0", "100", "200"]
    narrow = _parse(html_report.markdown_html("| a | b |\n|---|---|\n| 1 | 2 |"))
    assert narrow.rows == [["a", "b"], ["1", "2"]]


@pytest.mark.slow
def test_every_table_fits_its_page(browser):
    for page in sorted(COMMITTED.glob("*.html")):
        _load(browser, page)
        too_wide = browser.execute_script(
            "return [...document.querySelectorAll('table')].filter(t =>"
            " t.getBoundingClientRect().width > t.parentElement.clientWidth + 0.5)"
            ".map(t => [t.rows[0].cells.length, t.getBoundingClientRect().width])"
        )
        assert not too_wide, (page.name, too_wide)


@pytest.fixture(scope="module")
def browser_without_javascript():
    driver = _chromium(javascript=False)
    yield driver
    driver.quit()


@pytest.mark.slow
def test_without_javascript_every_statement_reads_and_the_address_shows_6c(
    browser_without_javascript,
):
    from selenium.webdriver.common.by import By

    driver = browser_without_javascript
    _load(driver, COMMITTED / "index.html", "#s-6c")
    statements = driver.find_elements(By.CSS_SELECTOR, "details.statement")
    assert len(statements) == len(STATEMENTS)
    # every statement's body is on the page (report.js, which would close them, did not run)
    assert all(s.find_element(By.CSS_SELECTOR, ".body").is_displayed() for s in statements)
    target = driver.find_element(By.ID, "s-6c")
    top = driver.execute_script("return arguments[0].getBoundingClientRect().top", target)
    assert 0 <= top < 200, "index.html#s-6c does not scroll to 6c"
    assert STATEMENTS["6c"].text in html.unescape(target.text) and "Criterion" in target.text
    # the filters and the open/close buttons need the script: not shown without it
    assert not driver.find_element(By.ID, "filters").is_displayed()
    assert not driver.find_element(By.ID, "shown").is_displayed()
