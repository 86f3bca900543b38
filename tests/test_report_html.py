"""The HTML report of a real small sweep (`psbench report DIR`), opened in headless
Chromium: it renders (a screenshot that is not blank), the page asks the network for
nothing (Chromium's own net log), and the DOM holds every section and every plot."""

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import run_cli
from psbench.report.html import render_html
from psbench.report.plots import Plot
from psbench.report.tables import Column, Table

SECTIONS = {
    "summary": "Summary",
    "tables": "Tables",
    "plots": "Plots",
    "environment": "Environment",
    "experiment": "Experiment",
}
# Chromium's own services (component and extension updates, network time, sign-in)
# make requests whatever the flags; theirs carry no initiator origin. A page's requests
# carry the page's origin ("null" for a file:// page).
BROWSER_INITIATOR = "not an origin"
CHROMIUM_SECONDS = 90


def chromium_or_skip() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("chromium is not installed (Debian package chromium)")
    return path


def live_members_of_group(pgid: int) -> list[int]:
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


def end_group(pgid: int) -> None:
    """Kills what is left of the process group Chromium was started in (its helpers),
    and waits until none of it is alive."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return
    end = time.monotonic() + 5  # bounds the wait; not a timing assertion
    while live_members_of_group(pgid) and time.monotonic() < end:
        time.sleep(0.05)
    assert live_members_of_group(pgid) == [], f"Chromium processes of group {pgid} left"


def open_in_chromium(page: Path, work: Path) -> dict:
    """Loads page in headless Chromium with a fresh profile: its DOM after loading, a
    screenshot and the net log of everything Chromium requested."""
    shot, netlog = work / "shot.png", work / "netlog.json"
    args = [
        chromium_or_skip(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        # what Chromium's own services try still fails at name resolution, so the
        # test sends nothing off this machine
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={work / 'profile'}",
        f"--log-net-log={netlog}",
        f"--screenshot={shot}",
        "--dump-dom",
        "--window-size=1280,4000",
        page.resolve().as_uri(),
    ]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        out, err = proc.communicate(timeout=CHROMIUM_SECONDS)
    except subprocess.TimeoutExpired:
        end_group(proc.pid)
        proc.communicate()
        pytest.fail(f"chromium did not finish within {CHROMIUM_SECONDS} s")
    end_group(proc.pid)
    assert proc.returncode == 0, err.decode(errors="replace")[-2000:]
    return {
        "dom": out.decode("utf-8", errors="replace"),
        "screenshot": shot,
        "netlog": json.loads(netlog.read_text()),
    }


def page_requests(netlog: dict) -> list[dict]:
    """Every URL request the page made, as {url, initiator, net_error}: net_error is
    the request's last error (0 if none)."""
    names = {number: name for name, number in netlog["constants"]["logEventTypes"].items()}
    started: dict[int, dict] = {}
    errors: dict[int, int] = {}
    for event in netlog["events"]:
        params = event.get("params") or {}
        source = event["source"]["id"]
        if names.get(event["type"]) == "URL_REQUEST_START_JOB" and "url" in params:
            started.setdefault(source, params)
        if params.get("net_error", 0) < 0:
            errors[source] = params["net_error"]
    return [
        {"url": p["url"], "initiator": p.get("initiator"), "net_error": errors.get(source, 0)}
        for source, p in started.items()
        if p.get("initiator") != BROWSER_INITIATOR
    ]


def attribute_urls(html_text: str) -> list[str]:
    return re.findall(
        r"""\b(?:src|href|srcset|action|data)\s*=\s*["']?([^"'\s>]*)""",
        html_text,
        flags=re.IGNORECASE,
    )


@pytest.fixture(scope="module")
def report_dir(report_sweep, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html") / "report"
    proc = run_cli(["report", str(report_sweep), "-o", str(out)], out.parent / "results")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def viewed(report_dir, tmp_path_factory) -> dict:
    return open_in_chromium(report_dir / "report.html", tmp_path_factory.mktemp("chromium"))


def test_the_page_renders_to_a_screenshot_that_is_not_blank(viewed):
    image = Image.open(viewed["screenshot"]).convert("RGB")
    assert image.size == (1280, 4000)
    colours = len(image.getcolors(maxcolors=image.width * image.height))
    not_white = float((np.asarray(image) < 245).any(axis=2).mean())
    assert colours > 200, f"{colours} distinct colours: the page looks blank"
    assert not_white > 0.05, f"{not_white:.1%} of the pixels are not white"


def test_the_page_requests_nothing_from_the_network(viewed):
    requests = page_requests(viewed["netlog"])
    assert [r for r in requests if re.match(r"(https?|wss?)://", r["url"])] == []
    assert [r for r in requests if r["net_error"]] == []
    assert requests == []


def test_the_net_log_check_sees_a_page_that_fetches(tmp_path):
    """The control: a page with a remote stylesheet and image (on a closed loopback
    port) shows both requests, as made by the page and failed."""
    page = tmp_path / "fetching.html"
    page.write_text(
        '<!DOCTYPE html><html><head><link rel="stylesheet" '
        'href="http://127.0.0.1:9/style.css"></head><body>'
        '<img src="https://127.0.0.1:9/plot.png"></body></html>'
    )
    requests = page_requests(open_in_chromium(page, tmp_path)["netlog"])
    assert {r["url"] for r in requests} == {
        "http://127.0.0.1:9/style.css",
        "https://127.0.0.1:9/plot.png",
    }
    assert all(r["initiator"] == "null" and r["net_error"] < 0 for r in requests)


def test_the_dom_has_every_section_and_every_plot(viewed, report_dir):
    dom = viewed["dom"]
    for key, heading in SECTIONS.items():
        assert f'<section id="{key}">' in dom and f"<h2>{heading}</h2>" in dom, key
        assert f'<a href="#{key}">{heading}</a>' in dom, key
    stems = sorted(p.stem for p in (report_dir / "plots").glob("*.png"))
    assert len(stems) >= 6, stems
    for stem in stems:
        figure = re.search(
            rf'<figure id="plot-{re.escape(stem)}">(.*?)</figure>', dom, flags=re.DOTALL
        )
        assert figure, stem
        assert '<img src="data:image/png;base64,' in figure.group(1), stem
    assert dom.count("<table") >= 2 and "report-sweep" in dom  # the experiment's name


def test_the_html_file_refers_to_nothing_outside_itself(report_dir):
    text = (report_dir / "report.html").read_text()
    urls = attribute_urls(text)
    assert urls and all(u.startswith(("#", "data:")) for u in urls), [
        u[:60] for u in urls if not u.startswith(("#", "data:"))
    ]
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", text, re.I)
    assert "<script" not in text.lower() and "@import" not in text


def tiny_plot(folder: Path) -> Plot:
    png = folder / "tiny.png"
    Image.new("RGB", (4, 3), (200, 30, 30)).save(png)
    return Plot("tiny", "A <tiny> plot", "Caption & more", png, folder / "tiny.svg")


def test_render_html_escapes_everything_and_keeps_nested_environment(tmp_path):
    table = Table(
        "t",
        "Latency <µs>",
        [Column("configuration", "label"), Column("p50 µs", "p50_ns", "us")],
        [["<script>x</script>", 15092.5], ["udp", None]],
        notes=["a & b"],
    )
    text = render_html(
        "Report <1>",
        ["12 runs"],
        ["virtualized <docker>"],
        [table],
        [tiny_plot(tmp_path)],
        {"cpu": {"model": "x<y", "online": [0, 1]}, "git": None},
        None,
        ["latency against subscriber count: no run varies it"],
    )
    assert "<script>" not in text and "&lt;script&gt;x&lt;/script&gt;" in text
    assert '<td class="num">15.09</td>' in text and '<td class="num">-</td>' in text
    assert "warning: virtualized &lt;docker&gt;" in text and "a &amp; b" in text
    assert "<dt>model</dt><dd>x&lt;y</dd>" in text and "<dd>0, 1</dd>" in text
    assert "No experiment file" in text and "no run varies it" in text
    assert 'alt="A &lt;tiny&gt; plot"' in text and "data:image/png;base64," in text
    assert (
        render_html("Report <1>", ["12 runs"], [], [table], [], {}, "name: x\n", []).count(
            "<pre>name: x\n</pre>"
        )
        == 1
    )


def test_a_long_table_folds_and_a_short_one_does_not():
    from psbench.report.html import FOLDED_ROWS

    def page(rows: int) -> str:
        table = Table("t", "T", [Column("n", "n", "count")], [[i] for i in range(rows)])
        return render_html("R", [], [], [table], [], {}, None, [])

    assert "<details>" not in page(FOLDED_ROWS)
    folded = page(FOLDED_ROWS + 1)
    assert f"<summary>{FOLDED_ROWS + 1} rows: show the table</summary>" in folded
    assert folded.count("<tr>") == FOLDED_ROWS + 2  # header and every row still there
