"""The report's plots, drawn from a real small sweep: every plot written as a valid PNG and
SVG, byte-identical when drawn twice, and the plots a sweep cannot support left out with a
note saying why."""

import xml.etree.ElementTree as ET
from dataclasses import replace

import numpy as np
import pytest

from psbench.report.plots import binned_over_time, spectrum_of, write_plots
from psbench.results.configs import build_configs
from psbench.results.load import load_results

EXPECTED = {
    "latency-vs-size",
    "percentile-spectrum-ping",
    "percentile-spectrum-pubsub",
    "latency-histograms",
    "latency-over-time",
    "throughput-vs-size",
}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def configs(report_sweep):
    return build_configs(load_results(report_sweep))


@pytest.fixture(scope="module")
def written(configs, tmp_path_factory):
    return write_plots(configs, tmp_path_factory.mktemp("first") / "plots")


def svg_text(path) -> str:
    """Every text element of an SVG, joined (the plots keep text as text)."""
    root = ET.parse(path).getroot()
    return " ".join(t.text or "" for t in root.iter() if t.tag.endswith("text"))


def test_every_plot_is_written_as_png_and_svg(written):
    plots, _ = written
    assert {p.name for p in plots} == EXPECTED
    for plot in plots:
        assert plot.title and plot.caption
        assert plot.png.name == f"{plot.name}.png" and plot.svg.name == f"{plot.name}.svg"
        data = plot.png.read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000, plot.png
        root = ET.parse(plot.svg).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg", plot.svg


def test_plots_are_identical_when_drawn_again(configs, written, tmp_path):
    plots, notes = written
    again, again_notes = write_plots(configs, tmp_path / "again")
    assert [p.name for p in again] == [p.name for p in plots] and again_notes == notes
    for first, second in zip(plots, again):
        assert first.png.read_bytes() == second.png.read_bytes(), first.name
        assert first.svg.read_bytes() == second.svg.read_bytes(), first.name


def test_legends_name_series_by_what_differs_and_never_mix_metrics(written):
    by_name = {p.name: p for p in written[0]}
    size_text = svg_text(by_name["latency-vs-size"].svg)
    assert "RTT/2 latency against message size" in size_text
    assert "one-way latency against message size" in size_text
    assert "udp" in size_text and "shm" in size_text and "4 KiB" in size_text
    assert "ping" not in svg_text(by_name["percentile-spectrum-pubsub"].svg)
    throughput = svg_text(by_name["throughput-vs-size"].svg)
    assert "samples/s" in throughput and "Mbit/s" in throughput


def test_subscriber_plot_is_left_out_with_a_note_when_no_run_varies_subscribers(written):
    plots, notes = written
    assert "latency-vs-subscribers" not in {p.name for p in plots}
    assert "latency against subscriber count: no run varies subscribers" in notes
    assert not any(n.startswith("throughput against") for n in notes), notes
    # the sweep's pubsub runs last 0.25 s: no whole second to draw over time
    assert any(n.startswith("throughput over time: no pubsub run") for n in notes)


def test_subscriber_plot_is_drawn_when_subscribers_vary(configs, tmp_path):
    ping = [c for c in configs if c.kind == "ping" and c.is_baseline]
    varied = [replace(c, params={**c.params, "subscribers": n}) for n in (1, 2, 4) for c in ping]
    plots, notes = write_plots(varied, tmp_path)
    names = {p.name for p in plots}
    assert "latency-vs-subscribers" in names, notes
    assert not any("subscriber" in n for n in notes), notes
    text = svg_text(tmp_path / "latency-vs-subscribers.svg")
    assert "subscribers" in text and "udp 64 B" in text and "shm 4 KiB" in text
    assert "solid p50, dashed p99" in text  # one legend entry per series, styles named
    # 12 ping configurations are too many lines for one spectrum: one figure per size
    assert {"percentile-spectrum-ping-64B", "percentile-spectrum-ping-4KiB"} <= names
    assert "throughput against message size: no pubsub runs" in notes


def test_no_plots_without_an_ok_run(tmp_path):
    assert write_plots([], tmp_path / "plots") == (
        [],
        ["no plots: no configuration has an ok run with samples"],
    )
    assert not (tmp_path / "plots").exists()


def test_latency_over_time_is_binned_not_drawn_point_by_point():
    receive = np.arange(1_000_000, dtype=np.float64) * 1000.0  # 1 ms apart
    latency = np.tile([1.0, 3.0, 3.0, 9.0], 250_000)  # median 3 in any bin
    centres, low, middle, high = binned_over_time(receive, latency, 200)
    assert len(centres) == 200 and centres[0] > 0 and centres[-1] < 1000
    assert set(low) == {1.0} and set(high) == {9.0} and set(middle) == {3.0}


def test_spectrum_stops_where_the_samples_run_out():
    reach, latency = spectrum_of(np.arange(1, 1001, dtype=np.float64))
    assert reach[0] == 1 and reach[-1] <= 1000 and latency[0] == 1
    assert latency[-1] <= 1000 and np.all(np.diff(latency) >= 0)
