"""What in the environment makes a result noisy: load at the start, runs without CPU
pinning or without real-time priority, virtual machines, CPU frequency scaling. Read from
env.json and from each node's own record of how it ran (its summary's "realtime")."""

from psbench.hosts.clock import FLAG_SHARE
from psbench.report.cpu_text import spinning_warning
from psbench.results.configs import Config
from psbench.results.run_record import block

# 1-minute load per online CPU above which the machine was busy before the first run.
BUSY_LOAD_PER_CPU = 0.5


def _roles_realtime(config: Config) -> list[dict]:
    return [s.get("realtime") or {} for run in config.ok_runs for s in run.summaries.values()]


def _names(configs: list[Config], total: int) -> str:
    if len(configs) == total:
        return "every configuration"
    shown = ", ".join(c.label for c in configs[:4])
    return shown + (f" and {len(configs) - 4} more" if len(configs) > 4 else "")


def environment_warnings(env: dict, configs: list[Config]) -> list[str]:
    warnings = []
    cpus = len(env.get("online_cpus") or []) or env.get("logical_cpus") or 0
    load = (env.get("load_average") or [None])[0]
    if load is not None and cpus and load > BUSY_LOAD_PER_CPU * cpus:
        warnings.append(
            f"the machine was busy when the sweep started: 1-minute load {load:g} on {cpus} CPUs"
        )
    measured = [c for c in configs if c.ok_runs]
    unpinned = [
        c
        for c in measured
        if any((rt.get("cpu") is None or rt["cpu"] < 0) for rt in _roles_realtime(c))
    ]
    if unpinned:
        warnings.append(
            f"not pinned to CPUs (the scheduler moved the roles): {_names(unpinned, len(measured))}"
        )
    not_rt = [
        c
        for c in measured
        if any(
            rt.get("sched_policy") not in ("SCHED_FIFO", "SCHED_RR") for rt in _roles_realtime(c)
        )
    ]
    if not_rt:
        warnings.append(
            f"no real-time priority (SCHED_OTHER; `fifo` sets SCHED_FIFO): "
            f"{_names(not_rt, len(measured))}"
        )
    virt = env.get("virtualization") or {}
    kind = virt.get("systemd_detect_virt")
    if (kind and kind != "none") or virt.get("hypervisor_flag"):
        warnings.append(
            f"virtualized ({kind or 'hypervisor flag set'}): other guests share the hardware"
        )
    governor = env.get("cpufreq_governor")
    if isinstance(governor, dict):
        others = sorted({g for g in governor.values() if g and g != "performance"})
        if others:
            warnings.append(
                f"CPU frequency governor {', '.join(others)} (not "
                f"performance): clock speed changes during runs"
            )
    spinning = [c for c in measured if any(_spinning(run) for run in c.ok_runs)]
    if spinning:
        shared = [s for c in spinning for run in c.ok_runs if (s := _spinning(run)) is not None]
        worst = max(shared, key=lambda sharing: sharing["spinning_per_cpu"])
        warnings.append(f"{_names(spinning, len(measured))}: {spinning_warning(worst)}")
    return warnings + clock_warnings(measured)


def _spinning(run) -> dict | None:
    sharing = block(run.run_record, "cpu_sharing")
    return sharing if sharing.get("spinning_per_cpu") else None


def clock_corrections(config: Config) -> list[dict]:
    """The clock corrections of a configuration's runs (one-way between real machines)."""
    return [
        s["clock"]
        for run in config.ok_runs
        for s in block(run.run_record, "stats").values()
        if isinstance(s, dict) and s.get("clock")
    ]


def clock_warnings(measured: list[Config]) -> list[str]:
    corrected = [c for c in measured if clock_corrections(c)]
    flagged = [c for c in corrected if any(k["flagged"] for k in clock_corrections(c))]
    warnings = []
    if corrected:
        worst = max(k["uncertainty_ns"] for c in corrected for k in clock_corrections(c))
        warnings.append(
            f"one-way latency between real machines, corrected for their clocks' offset "
            f"(known to ±{worst / 1000:.1f} µs at worst): {_names(corrected, len(measured))}"
        )
    if flagged:
        warnings.append(
            f"one-way figures flagged (the clocks' uncertainty is over {100 * FLAG_SHARE:.0f}% "
            "of the median, or the offset drifted; run.json stats.*.clock says which): "
            f"{_names(flagged, len(measured))}; lead with RTT/2 (kind ping, one clock)"
        )
    return warnings
