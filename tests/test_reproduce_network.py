"""`psbench reproduce NAME --network`: a study's network variant (NAME-network[-quick].yaml)
runs on emulated hosts and is reported in the paper's form once per network, each with
its own tables and figures, from that network's runs only (values recomputed here from
the samples, never a timing asserted). Needs root for the runs (CI is)."""

import json
import os

import pytest

from conftest import REPO, run_cli
from psbench.results.load import load_results
from psbench.run.experiment import prepare

SEEDS = REPO / "experiments" / "seeds"
NETWORKS = {
    "a-100mbit-b-100mbit": "a(100mbit)+b(100mbit)",
    "a-1gbit-b-1gbit": "a(1gbit)+b(1gbit)",
}


def test_the_network_files_keep_the_papers_method_on_two_hosts(results):
    proc = run_cli(["reproduce", "zak2017", "--network", "--dry-run"], results)
    assert proc.returncode == 0, proc.stderr
    assert "100 runs" in proc.stdout
    for name, sizes in (("zak2017-network", 10), ("zak2017-network-quick", 4)):
        runs = [r.params for r in prepare(SEEDS / f"{name}.yaml", f"{name}.yaml").runs]
        assert {r["driver"] for r in runs} == {"fastdds", "cyclonedds", "udp"}  # no shm
        assert {r["place"]["ping"] for r in runs} == {"a"}
        assert {r["place"]["pong"] for r in runs} == {"b"}
        rates = {tuple(h["rate"] for h in r["hosts"].values()) for r in runs}
        assert rates == {("100mbit", "100mbit"), ("1gbit", "1gbit")}
        assert len(runs) == 2 * (2 * 2 + 1) * sizes


def test_vanderbilt_over_a_network_gives_each_subscriber_a_host(results):
    proc = run_cli(["reproduce", "vanderbilt2006", "--network", "--quick", "--dry-run"], results)
    assert proc.returncode == 0, proc.stderr
    for name in ("vanderbilt2006-network", "vanderbilt2006-network-quick"):
        runs = [r.params for r in prepare(SEEDS / f"{name}.yaml", f"{name}.yaml").runs]
        for r in runs:
            assert len(r["hosts"]) == 13 and {h["rate"] for h in r["hosts"].values()} == {"1gbit"}
            assert r["place"]["sub"] == [f"s{i}" for i in range(1, 13)]
            assert r["place"]["pub"] == r["place"]["ping"] == "p"


def test_a_study_without_a_network_variant_says_so(results):
    proc = run_cli(["reproduce", "eprosima2022", "--network", "--dry-run"], results)
    assert proc.returncode == 2
    assert "has no network variant yet" in proc.stderr and "run it without --network" in (
        proc.stderr
    )


@pytest.fixture(scope="module")
def quick(driver_libs, tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("emulated hosts need root (CI is)")
    folder = tmp_path_factory.mktemp("zak2017-network")
    out = folder / "sweep"
    proc = run_cli(
        ["reproduce", "zak2017", "--network", "--quick", "-o", str(out), "--no-plots"],
        folder / "results",
        timeout=900,
    )
    return proc, out, json.loads((out / "report" / "paper.json").read_text())


@pytest.mark.long
def test_each_network_gets_the_papers_sections_from_its_own_runs(quick):
    proc, out, doc = quick
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    titles = [s["title"] for s in doc["sections"]]
    for label in NETWORKS.values():
        assert f"Setup [{label}]" in titles and f"Figure 4: mean latency [{label}]" in titles
    tables = {t["name"]: t for s in doc["sections"] for t in s["tables"]}
    runs = load_results(out).ok_runs
    for slug, label in NETWORKS.items():
        table = tables[f"table1-fastdds-best-effort-{slug}"]
        assert (out / "report" / "paper" / f"table1-fastdds-best-effort-{slug}.md").is_file()
        assert "between emulated hosts " + label in table["notes"][0]
        # Its 16 KiB row is that network's run, not the other's.
        mine = [
            r
            for r in runs
            if r.driver == "fastdds"
            and r.size == 16384
            and (r.params.get("reliability") or "best_effort") == "best_effort"
            and label.startswith(f"a({r.params['hosts']['a']['rate']})")
        ]
        assert len(mine) == 1
        row = next(row for row in table["rows"] if row["our_size_bytes"] == 16384)
        assert row["n"] == len(mine[0].latency_ns)
        assert row["mean_ns"] == pytest.approx(mine[0].latency_ns.mean())
