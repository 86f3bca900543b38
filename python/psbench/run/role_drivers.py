"""Runs whose roles load different drivers: two implementations of one wire protocol
(DDS vendors over RTPS) talking to each other. Written `ping=A,pong=B` on
the command line (`--driver`) and `driver: {ping: A, pong: B}` in an
experiment; that text, roles in order (ping before pong, pub before sub), is the run's
driver label everywhere
(reports, --filter driver=..., run directory names).

Each process loads its role's driver and nothing else changes: the same run id (and so
the same DDS domain and topic names), the same QoS, transport and options for both. A
driver per role needs one process per role (placement inter) and a plain pair: no relay,
graph or late joiner, whose extra processes would have no driver of their own."""

# The roles of each kind that take a driver each.
ROLES_OF = {"ping": ("ping", "pong"), "pubsub": ("pub", "sub")}


def parse(text: str) -> dict[str, str] | None:
    """{role: driver} from "ROLE=DRIVER,ROLE=DRIVER", or None for a plain driver name.
    ValueError names what is wrong."""
    if "=" not in text:
        return None
    mapping: dict[str, str] = {}
    for part in text.split(","):
        role, sep, driver = (p.strip() for p in part.partition("="))
        if not sep or not role or not driver:
            raise ValueError(f"{part.strip()!r}: give ROLE=DRIVER, e.g. ping=A,pong=B")
        if role in mapping:
            raise ValueError(f"role {role!r} is given twice")
        mapping[role] = driver
    return mapping


def label(mapping: dict[str, str]) -> str:
    """The run's driver label: ROLE=DRIVER pairs in role order (ping before pong, pub
    before sub), so one pairing always reads the same."""
    return ",".join(f"{role}={mapping[role]}" for role in sorted(mapping))


def problem(kind: str, mapping: dict[str, str], settings: dict) -> str | None:
    """Why this run cannot load a driver per role, or None. settings: the run's other
    settings by name (placement, relays, late_join, subscribers, publishers, topics)."""
    roles = ROLES_OF.get(kind)
    if roles is None:
        return f"a driver per role is for ping and pubsub runs, not {kind}"
    if set(mapping) != set(roles):
        return (
            f"a {kind} run needs a driver for each of its roles {' and '.join(roles)}, "
            f"e.g. {label(dict(zip(roles, ('A', 'B'))))}; got "
            f"{', '.join(sorted(mapping))}"
        )
    if settings.get("placement") == "intra":
        return "a driver per role needs one process per role: use placement inter"
    for key in ("relays", "late_join"):
        if settings.get(key):
            return (
                f"a driver per role runs a plain pair: {key} would start a process with no driver"
            )
    return None


def common_capabilities(capabilities: list[dict]) -> dict:
    """What every driver of the run can do: the intersection of each set, and a loaned
    write only when all have one (psbench's automatic choices are made on this)."""
    if not capabilities:
        return {}
    common = dict(capabilities[0])
    for other in capabilities[1:]:
        for key, value in list(common.items()):
            if isinstance(value, list):
                common[key] = [v for v in value if v in (other.get(key) or [])]
            elif isinstance(value, bool):
                common[key] = value and bool(other.get(key))
    return common


# The role whose samples sum a run up: its driver is the run's `driver` in run.json.
MEASURING_ROLE = {"ping": "ping", "pubsub": "sub"}


def resolve(kind: str, text: str, settings: dict, find) -> tuple[str, str, dict[str, str]]:
    """(label, the measuring role's library, {role: library}) for a --driver value,
    ({name}, its library, {}) for one driver. find(name) -> the library of a built
    driver (UserError when there is none). ValueError says what is wrong."""
    mapping = parse(text)
    if mapping is None:
        return text, str(find(text)), {}
    why = problem(kind, mapping, settings)
    if why is not None:
        raise ValueError(why)
    libraries = {role: str(find(name)) for role, name in mapping.items()}
    return label(mapping), libraries[MEASURING_ROLE[kind]], libraries
