"""Every printed latency is its exact decimal value rounded one way, halves up, the same
in every format. The three ties the demo printed one digit low (f"{ns / 1000:.2f}" on a
binary double): nats 64 B p50 60,355.0 ns, iceoryx 64 B p50 low 30,075.0 ns, zeromq
16 KiB p99 high 90,455.0 ns."""

import csv
import io
import json
from decimal import Decimal

import numpy as np
import pytest

from psbench.base.units import decimal_text, micros
from psbench.report import formats
from psbench.report.html import table_html
from psbench.report.run_text import latency_table
from psbench.report.tables import Column, Table

TIES = {60_355.0: "60.36", 30_075.0: "30.08", 90_455.0: "90.46"}


@pytest.mark.parametrize("ns, text", TIES.items())
def test_the_demos_ties_round_up(ns, text):
    assert f"{ns / 1000:.2f}" != text  # the old formatting, one digit low
    assert micros(ns) == text


def test_every_format_prints_the_same_figure():
    table = Table("t", "ties", [Column("x µs", "x_ns", "us")], [[ns] for ns in TIES])
    expected = list(TIES.values())
    assert [row[0] for row in table.text_rows()] == expected
    terminal, markdown, latex = (
        formats.terminal(table),
        formats.markdown(table),
        formats.latex(table),
    )
    html = table_html(table)
    for text in expected:
        assert text in terminal and f"| {text} |" in markdown and f"{text} \\\\" in latex
        assert f">{text}<" in html
    # CSV and JSON keep the exact nanoseconds, never a rounded string
    assert [
        float(r[0]) for r in list(csv.reader(io.StringIO(formats.csv_text(table))))[1:]
    ] == list(TIES)
    assert [r["x_ns"] for r in json.loads(formats.json_text(table))["rows"]] == list(TIES)
    from psbench.report.run_text import STAT_COLUMNS

    line = latency_table([("RTT/2", {c: 60_355.0 for c in STAT_COLUMNS})])
    assert "60.36" in line and "60.35" not in line


def test_the_rule_on_random_values_against_the_exact_decimal():
    # Half-integer nanoseconds (RTT/2 of an odd round trip) and integers alike.
    values = np.random.default_rng(1).integers(0, 10**9, 20_000) / 2.0
    for ns in values:
        exact = Decimal(int(ns * 2)) / 2000  # the µs value, exactly
        whole, rest = divmod(exact * 100, 1)
        expected = (whole + (1 if rest >= Decimal("0.5") else 0)) / 100
        assert micros(ns) == f"{expected:.2f}", ns
    assert decimal_text(1_234_567.5, 1, 3, grouping=True) == "1,234.6"
    assert micros(None) == "-" and micros(0.0) == "0.00"
