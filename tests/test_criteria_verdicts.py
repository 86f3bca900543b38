"""psbench criteria: each criterion's verdict from hand-written inputs whose answer is
known (yes, no, partial, not applicable, not testable), without running anything."""

from pathlib import Path

from psbench.base.manifests import Claim
from psbench.run.criteria import (
    architecture,
    documented,
    interoperability,
    licence,
    monitoring,
    package_licences,
    persistence,
    restart,
)

# Interoperability -----------------------------------------------------------------


def cell(ping, pong, status="ok", sent=50, delivered=50, reliability="reliable", size=64):
    return {"ping": ping, "pong": pong, "status": status, "sent": sent,
            "delivered": delivered, "reliability": reliability, "size": size}  # fmt: skip


def test_interop_yes_when_a_partner_delivers_every_sample_both_ways():
    cells = [cell("a", "a"), cell("a", "b"), cell("b", "a"), cell("b", "b")]
    v = interoperability.judge("a", "rtps", cells, "/r")
    assert v.verdict == "yes"
    assert v.figures["cells"] == 2 and v.figures["worked"] == 2
    assert "b: 2 of 2 cells" in v.evidence and v.run_dir == "/r"


def test_interop_partial_when_one_direction_loses_samples():
    cells = [cell("a", "b"), cell("b", "a", delivered=49)]
    v = interoperability.judge("a", "rtps", cells)
    assert v.verdict == "partial"
    assert "1 of 2 cells" in v.evidence and "b→a reliable 64 B" in v.evidence


def test_interop_yes_needs_both_ways_not_one_way_twice():
    # Two settings, a as ping only: one way, so not yes even though every cell worked.
    cells = [cell("a", "b"), cell("a", "b", reliability="best_effort")]
    assert interoperability.judge("a", "rtps", cells).verdict == "partial"


def test_interop_no_when_no_cross_cell_worked_and_own_cells_do_not_count():
    cells = [cell("a", "a"), cell("a", "b", status="failed", delivered=None),
             cell("b", "a", sent=50, delivered=0)]  # fmt: skip
    v = interoperability.judge("a", "rtps", cells)
    assert v.verdict == "no" and v.figures["worked"] == 0


def test_interop_not_applicable_without_wire_or_partner():
    assert interoperability.judge("z", None, []).verdict == "not applicable"
    alone = interoperability.judge("a", "rtps", [cell("a", "a")])
    assert alone.verdict == "not applicable" and "no other driver" in alone.evidence


# Persistence (late joiner) ----------------------------------------------------------


def late(history, first=None, last=None):
    return {"history": history, "history_first_seq": first, "history_last_seq": last,
            "first_live_seq": 1000}  # fmt: skip


def test_persistence_yes_when_it_gets_exactly_the_depth_asked():
    v = persistence.judge("d", "ok", None, late(5, 995, 999), asked=5, run_dir="/run")
    assert v.verdict == "yes" and v.figures["history"] == 5 and v.run_dir == "/run"
    assert "got 5 of them as history (seq 995-999)" in v.evidence


def test_persistence_partial_when_fewer_or_more_than_asked():
    assert persistence.judge("d", "ok", None, late(3, 997, 999), asked=5).verdict == "partial"
    assert persistence.judge("d", "ok", None, late(7, 993, 999), asked=5).verdict == "partial"


def test_persistence_no_when_nothing_came_with_transient_local_asked():
    v = persistence.judge("d", "ok", None, late(0), asked=5)
    assert v.verdict == "no" and "transient_local was asked" in v.evidence


def test_persistence_reads_a_driver_without_depth_against_its_documented_count():
    claim = Claim("one retained message per topic", "https://example.org/spec", 1)
    yes = persistence.judge("d", "ok", None, late(1, 999, 999), asked=None, documented=claim)
    assert yes.verdict == "yes" and yes.source == "https://example.org/spec"
    assert "1 documented" in yes.evidence and "one retained message" in yes.evidence
    two = persistence.judge("d", "ok", None, late(2, 998, 999), asked=None, documented=claim)
    assert two.verdict == "partial"
    # Nothing documented: some history is partial, not yes (there is nothing to match).
    unknown = persistence.judge("d", "ok", None, late(1, 999, 999), asked=None)
    assert unknown.verdict == "partial" and "none documented" in unknown.evidence


def test_persistence_decides_nothing_when_the_late_joiner_missed_the_pause():
    # Joined after the pause: what it got as "history" is not the samples before seq N.
    v = persistence.judge("d", "ok", None, late(2, 1400, 1401) | {"in_pause": False}, asked=5)
    assert v.verdict == "not testable here" and v.evidence.startswith(persistence.MISSED_PAUSE)
    inside = persistence.judge("d", "ok", None, late(5, 995, 999) | {"in_pause": True}, asked=5)
    assert inside.verdict == "yes"
    # Joined in the pause, but 33 written before it were still on their way (a broker
    # behind): they came as live samples, and the count is not the broker's history.
    held = late(34, 966, 999) | {"in_pause": True, "before_pause_after_join": 33}
    v = persistence.judge("d", "ok", None, held, asked=None)
    assert v.verdict == "not testable here" and "33 written before the pause" in v.evidence


def test_persistence_refusal_is_not_applicable_and_quoted():
    refusal = "psbench-node: d: durability 'transient_local' is not supported"
    v = persistence.judge("d", "refused", refusal, None, asked=5)
    assert v.verdict == "not applicable" and refusal in v.evidence


def test_persistence_a_failed_run_is_not_testable():
    v = persistence.judge("d", "failed", "match timeout", None, asked=5)
    assert v.verdict == "not testable here" and "match timeout" in v.evidence
    # The late joiner's record with nothing in it is no "no" when the run failed (its
    # reader may never have existed).
    broken = persistence.judge("d", "failed", "late-sub: cannot create a reader", late(0), 5)
    assert broken.verdict == "not testable here" and "cannot create a reader" in broken.evidence


# Monitoring -------------------------------------------------------------------------

EXPECT = r"^psb_[A-Za-z0-9]+_\w+$"


def test_monitoring_yes_when_the_tools_output_shows_the_runs_topic():
    output = "psubscribe\npsb_*\n1\npmessage\npsb_*\npsb_Ab12_data\n\x00\x01payload\n"
    v = monitoring.judge("d", "tool", EXPECT, output, "ok")
    assert v.verdict == "yes" and "'psb_Ab12_data'" in v.evidence


def test_monitoring_no_when_the_tool_ran_and_saw_nothing_of_it():
    # The echo of its own pattern (psb_*) is not the traffic.
    v = monitoring.judge("d", "tool", EXPECT, "psubscribe\npsb_*\n1\n", "ok")
    assert v.verdict == "no" and v.figures["output_lines"] == 3


def test_monitoring_not_testable_when_tool_or_run_failed():
    assert monitoring.judge("d", "tool", EXPECT, None, "ok").verdict == "not testable here"
    failed = monitoring.judge("d", "tool", EXPECT, "psb_Ab12_data\n", "failed", "crash")
    assert failed.verdict == "not testable here" and "crash" in failed.evidence


def test_monitoring_placeholders_take_the_brokers_address():
    argv = monitoring._argv(("t", "-h", "{host}", "-p", "{port}", "--at", "{broker}"),
                            "127.0.0.1:4242")  # fmt: skip
    assert argv == ["t", "-h", "127.0.0.1", "-p", "4242", "--at", "127.0.0.1:4242"]


def test_monitoring_service_dir_is_the_brokers_folder():
    # A tool that reads the broker's own files (its node's cookie and ports) is given them.
    argv = monitoring._argv(("sh", "-c", "script", "tool", "{service_dir}", "{port}"),
                            "127.0.0.1:4242", Path("/r/monitoring/service-b"))  # fmt: skip
    assert argv == ["sh", "-c", "script", "tool", "/r/monitoring/service-b", "4242"]
    assert monitoring._argv(("t", "{service_dir}"), None) == ["t", ""]


# Architecture, documented claims ----------------------------------------------------


def test_architecture_is_the_manifests_with_per_transport_exceptions():
    plain = architecture.judge("d", "broker", {})
    assert plain.verdict == "broker" and plain.experiment == "manifest"
    routed = architecture.judge("d", "peer-to-peer", {"client": "router"})
    assert routed.verdict == "peer-to-peer (router on transport client)"


def test_a_claim_is_documented_with_its_source_and_no_claim_is_not_testable():
    claim = Claim("bridges between brokers", "https://example.org/bridge")
    v = documented.judge("d", "routing", claim)
    assert (v.verdict, v.evidence, v.source) == (
        "documented, not verified",
        "bridges between brokers",
        "https://example.org/bridge",
    )
    assert documented.judge("d", "routing", None).verdict == "not testable here"


# Licence ----------------------------------------------------------------------------

DEP5 = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: thing

Files: debian/*
Copyright: 2020 Someone
License: GPL-2+

Files: *
Copyright: 2009-2021 Someone Else
License: EPL-2.0 or EDL-1.0

License: EPL-2.0
 The text ...
"""


def test_dep5_licence_is_the_files_star_paragraphs():
    assert package_licences.dep5_licence(DEP5) == "EPL-2.0 or EDL-1.0"
    # Not machine-readable: no answer rather than a guess.
    assert package_licences.dep5_licence("This package was debianized by ...\n") is None
    assert package_licences.dep5_licence(DEP5.replace("Files: *", "Files: src/*")) is None


def test_cargo_and_pom_licences():
    assert (
        package_licences.cargo_toml_licence(
            '[package]\nname = "x"\nlicense = "EPL-2.0 OR Apache-2.0"\n'
        )
        == "EPL-2.0 OR Apache-2.0"
    )
    assert package_licences.cargo_toml_licence('[package]\nname = "x"\n') is None
    pom = ("<project><name>x</name><licenses><license><name>The Apache License, Version 2.0"
           "</name></license></licenses></project>")  # fmt: skip
    assert package_licences.pom_licences(pom) == ["The Apache License, Version 2.0"]
    assert package_licences.pom_licences("<project><name>x</name></project>") == []


def test_locked_version_is_the_registry_packages(tmp_path: Path):
    lock = tmp_path / "Cargo.lock"
    lock.write_text('[[package]]\nname = "x"\nversion = "0.1.0"\n\n[[package]]\nname = "y"\n'
                    'version = "1.2.3"\nsource = "registry+https://github.com/rust-lang/'
                    'crates.io-index"\n')  # fmt: skip
    assert package_licences.locked_version("y", [lock]) == "1.2.3"
    assert package_licences.locked_version("x", [lock]) is None  # a path dependency


def test_licence_verdict_lists_each_licence_once_and_says_what_it_could_not_read():
    v = licence.judge("d", [("Debian package a", "MIT", "/usr/share/doc/a/copyright"),
                            ("Debian package b", "mit", "/usr/share/doc/b/copyright"),
                            ("crate c", "Apache-2.0", "/reg/c-1.0/Cargo.toml"),
                            ("not found", None, "service s: program not installed")])  # fmt: skip
    assert v.verdict == "MIT + Apache-2.0"
    assert "/usr/share/doc/a/copyright" in v.evidence
    assert "unreadable: not found: service s: program not installed" in v.evidence
    none = licence.judge("d", [("Debian package a", None, "/x/copyright: No such file")])
    assert none.verdict == "not testable here" and "No such file" in none.evidence


def test_a_jars_own_pom_gives_its_licence(tmp_path: Path):
    import zipfile

    jar = tmp_path / "thing-1.2.3.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr("META-INF/maven/org.example/thing/pom.xml",
                         "<project><licenses><license><name>MIT License</name></license>"
                         "</licenses></project>")  # fmt: skip
    found, where = package_licences.jar(jar)
    assert found == "MIT License" and where.endswith(
        "thing-1.2.3.jar!/META-INF/maven/org.example/thing/pom.xml"
    )
    bare = tmp_path / "other-0.1.jar"
    with zipfile.ZipFile(bare, "w") as archive:
        archive.writestr("x.class", b"")
    found, why = package_licences.jar(bare)
    assert found is None and "no pom of other 0.1" in why


# Durability across a broker restart -------------------------------------------------


def restart_block(lost=0, recovery=1.4, published=1600, write_errors=0, done=True):
    receiver = {"published": published, "received": published - lost, "lost": lost,
                "duplicated": 0, "recovery_s": recovery, "reconnect_s": 0.3,
                "missing_ranges": [[700, 700 + lost - 1]] if lost else [],
                "written_before_kill_arrived_after": 3}  # fmt: skip
    return {"done": done, "killed_ns": 10**9, "ready_ns": 2 * 10**9, "error": None,
            "why_not": None, "write_errors": write_errors, "receivers": {"sub": receiver}}  # fmt: skip


def test_restart_yes_when_nothing_written_was_lost_and_deliveries_came_back():
    v = restart.judge("d", "ok", None, restart_block(write_errors=12), run_dir="/run")
    assert v.verdict == "yes" and v.figures["lost"] == 0 and v.figures["write_errors"] == 12
    assert "1,600 of 1,600 written arrived, 0 lost" in v.evidence
    assert "12 writes refused while it was down" in v.evidence and v.run_dir == "/run"


def test_restart_partial_when_some_was_lost_with_its_ranges():
    v = restart.judge("d", "incomplete", "lost", restart_block(lost=40))
    assert v.verdict == "partial" and "40 lost" in v.evidence
    assert "missing seq 700-739" in v.evidence


def test_restart_no_when_nothing_came_after_the_broker_served_again():
    v = restart.judge(
        "d", "failed", "sub: receiving: connection lost", restart_block(recovery=None)
    )
    assert v.verdict == "no" and "sub: receiving: connection lost" in v.evidence


def test_restart_refusal_or_no_broker_is_not_applicable_with_the_claim():
    claim = Claim("JetStream keeps streams on disk", "https://example.org/js", None)
    refused = restart.judge("d", "refused", "d: durability 'persistent' is not supported",
                            None, claim)  # fmt: skip
    assert refused.verdict == "not applicable" and refused.source == "https://example.org/js"
    assert "durability 'persistent' is not supported" in refused.evidence
    assert "documented: JetStream keeps streams on disk" in refused.evidence
    peer = restart.judge("d", "no broker", "its architecture is peer-to-peer", None)
    assert peer.verdict == "not applicable" and "no broker to restart" in peer.evidence


def test_restart_not_testable_when_the_restart_did_not_happen():
    early = restart_block(done=False) | {
        "why_not": "the run ended before the broker was to be killed"
    }
    v = restart.judge("d", "failed", "x", early)
    assert v.verdict == "not testable here" and "ended before the broker" in v.evidence
    # Deliveries came back, but the writers' count is unknown (a summary missing).
    block = restart_block()
    block["receivers"]["sub"] |= {"published": None, "lost": None}
    unknown = restart.judge("d", "failed", "pub: no summary", block)
    assert unknown.verdict == "not testable here" and "not known" in unknown.evidence
