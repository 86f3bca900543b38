"""What the eProsima article says (experiments/seeds/eprosima2022.published.yaml), as
psbench.reproduce.eprosima2022 shows it: the ratios of its conclusion, the runs that
crashed and which implementation kept up with the publication rate, per size for the
tables' published column and in sentences for the conclusions' notes; and
performance_test's names of the Array message sizes."""

from psbench.reproduce.layout import Layout

LAYOUT = Layout("eprosima2022")  # names, stand-ins, tables, figures: eprosima2022.layout.yaml
PLACEMENT_WORDS = LAYOUT.data["placement_words"]
# The largest UDP payload is 65,507 bytes: a message of 64 KiB or more is fragmented.
# The article's "below UDP fragmentation" and "large data samples" are read as the two
# sides of this line (it does not say where "large" starts).
UDP_FRAGMENTATION = 65507
KIB, MIB = 1024, 1024 * 1024
name_of = LAYOUT.name


def array_name(size: int | None) -> str:
    """performance_test's name for a message size: Array1k, Array60k, Array4m."""
    if size is None:
        return "-"
    if size % MIB == 0:
        return f"Array{size // MIB}m"
    if size % KIB == 0:
        return f"Array{size // KIB}k"
    return f"{size} B"


def array_size(name: str) -> int:
    """Array1m -> 1048576 (the inverse of array_name)."""
    body = name.removeprefix("Array")
    return int(body[:-1]) * {"k": KIB, "m": MIB}[body[-1].lower()]


def _published_ratio(published: dict, size: int) -> str | None:
    ratio = (published.get("latency") or {}).get("mean_ratio") or {}
    found = ratio.get("below_udp_fragmentation" if size < UDP_FRAGMENTATION else "large_samples")
    return f"{found['low']:g} to {found['high']:g}" if found else None


def _published_crashes(published: dict, metric: str) -> list[dict]:
    return list(((published.get(metric) or {}).get("crashed") or {}).get("runs") or [])


def _crashed_in_article(published: dict, metric: str, placement: str, size: int) -> list[str]:
    return [name_of(run["implementation"]) for run in _published_crashes(published, metric)
            if run.get("placement") == placement and array_size(run["size"]) == size]  # fmt: skip


def _statements(published: dict) -> list[dict]:
    return ((published.get("throughput") or {}).get("keeps_up") or {}).get("statements") or []


def _keeps_up_in_article(published: dict, implementation: str, placement: str, size: int):
    """What the article says about one implementation keeping up at one size, or None
    when it says nothing."""
    for s in _statements(published):
        if s.get("implementation") != implementation or s.get("placement") != placement:
            continue
        if (
            s.get("sizes") == "all"
            or ("size" in s and array_size(s["size"]) == size)
            or ("up_to" in s and size <= array_size(s["up_to"]))
        ):
            return bool(s["keeps_up"])
    return None


def _published_latency_text(published: dict, placement: str, size: int, others: list[str]):
    crashed = _crashed_in_article(published, "latency", placement, size)
    ratio = _published_ratio(published, size)
    parts = [f"{', '.join(crashed)} crashed"] if crashed else []
    if ratio and not crashed and others:
        parts.append(f"OpenDDS / Fast DDS mean {ratio}")
    return "; ".join(parts) or None


def _published_throughput_text(published: dict, placement: str, size: int) -> str | None:
    parts = []
    crashed = _crashed_in_article(published, "throughput", placement, size)
    for implementation in ("fastdds", "opendds"):
        said = _keeps_up_in_article(published, implementation, placement, size)
        if name_of(implementation) in crashed:
            parts.append(f"{name_of(implementation)} crashed")
        elif said is not None:
            parts.append(f"{name_of(implementation)} {'keeps up' if said else 'does not keep up'}")
    return "; ".join(parts) or None


def _crashes_text(published: dict, metric: str) -> str | None:
    """The article's crashes of one metric in words: 'OpenDDS crashed in one process
    with Array1m and Array4m'."""
    found: dict[tuple, list[str]] = {}
    for run in _published_crashes(published, metric):
        found.setdefault((run["implementation"], run["placement"]), []).append(run["size"])
    return "; ".join(f"{name_of(i)} crashed {PLACEMENT_WORDS.get(p, p)} with {' and '.join(sizes)}"
                     for (i, p), sizes in found.items()) or None  # fmt: skip


def _latency_article_note(published: dict) -> str:
    """The article's latency conclusion, from the published file's figures."""
    ratio = (published.get("latency") or {}).get("mean_ratio") or {}
    parts = [f"{r['low']:g} to {r['high']:g} times lower than OpenDDS's {where}"
             for key, where in (("below_udp_fragmentation", "below UDP fragmentation"),
                                ("large_samples", "for large samples")) if (r := ratio.get(key))]  # fmt: skip
    said = ["Fast DDS's mean latency is " + " and ".join(parts)] if parts else []
    said += [c for c in [_crashes_text(published, "latency")] if c]
    return f"The article: {'; '.join(said) or 'nothing printed'}. Here: Cyclone DDS over Fast DDS."


def _throughput_article_note(published: dict) -> str:
    """The article's throughput conclusion, from the published file's statements."""
    said = []
    for st in _statements(published):
        sizes = ("at every payload" if st.get("sizes") == "all" else f"up to {st['up_to']}"
                 if "up_to" in st else f"at {st.get('size')}")  # fmt: skip
        verb = "kept up" if st.get("keeps_up") else "did not keep up"
        where = PLACEMENT_WORDS.get(st.get("placement"), st.get("placement"))
        said.append(f"{name_of(st['implementation'])} {verb} {where} {sizes}")
    said += [c for c in [_crashes_text(published, "throughput")] if c]
    rate = (published.get("method") or {}).get("rate_hz")
    return (f"The article, at {f'the {rate:g} Hz' if rate else 'its'} publication rate: "
            f"{'; '.join(said) or 'nothing printed'}.")  # fmt: skip
