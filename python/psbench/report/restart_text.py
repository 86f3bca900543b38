"""The lines a run with a broker restart (--restart-broker) prints: when the broker was
killed and served again, and what each receiver got across it."""

RANGES_SHOWN = 3


def count_text(value) -> str:
    return "-" if value is None else f"{value:,}"


def restart_lines(restart: dict | None) -> list[str]:
    if not restart:
        return []
    head = (f"  broker restart: {restart['service']} killed (SIGKILL) {restart['at_s']:g} s "
            f"into the measurement, started again {restart['down_s']:g} s later")  # fmt: skip
    if not restart["done"]:
        why = restart.get("error") or restart.get("why_not") or "not done"
        return [f"{head}: NOT DONE ({why})"]
    down_s = (restart["ready_ns"] - restart["killed_ns"]) / 1e9
    lines = [f"{head}; serving again {down_s:.2f} s after the kill; "
             f"writes refused meanwhile: {count_text(restart['write_errors'])}"]  # fmt: skip
    for name, r in restart["receivers"].items():
        recovery = (f"deliveries again {r['recovery_s']:.2f} s after the kill "
                    f"({r['reconnect_s']:.2f} s after it served)"
                    if r["recovery_s"] is not None else "nothing arrived after it served")  # fmt: skip
        lost = count_text(r["lost"])
        ranges = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in
                           r["missing_ranges"][:RANGES_SHOWN])  # fmt: skip
        more = r["missing_ranges_total"] - min(RANGES_SHOWN, len(r["missing_ranges"]))
        where = f" (seq {ranges}{f' and {more} more ranges' if more > 0 else ''})" if ranges else ""
        lines.append(
            f"  {name} across the restart: {count_text(r['received'])} of "
            f"{count_text(r['published'])} received, lost {lost}{where}, duplicated "
            f"{count_text(r['duplicated'])}; {count_text(r['written_before_kill_arrived_after'])} "
            f"written before the kill arrived after it; {recovery}"
        )
    return lines
