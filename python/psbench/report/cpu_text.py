"""What a run's sharing of CPUs means for its figures, in words (run.json cpu_sharing)."""


def spinning_warning(sharing: dict) -> str:
    """Why a run whose busy-waiting roles share a CPU measures the scheduler
    (cpu_sharing.spinning_per_cpu, run/spec.py busy_waits)."""
    where = "one CPU" if sharing.get("pinned") else "the CPUs it may use"
    return (
        f"{sharing['spinning_per_cpu']:g} roles that busy-wait (notify poll, or a sender "
        f"that spins) share {where}: each runs until the scheduler ends its time slice, so "
        f"the latencies measure the scheduler's quantum (milliseconds), not the middleware; "
        f"give each its own CPU (cpus) or use notify wait"
    )
