"""Every run's configuration judged by the node itself before anything runs: the node's
`--check-stdin` gives each refusal it would make at run time (its capability checks and
the driver's own check()), so validation and the run can never disagree (docs/node.md,
"Checking a configuration"). One node process for all runs; each distinct argument list
once."""

import json
import subprocess
from dataclasses import replace
from pathlib import Path

from psbench.base import paths
from psbench.base.errors import UserError
from psbench.run.services import broker_placeholder
from psbench.run.spec import MeasureSpec, node_argv

CHECK_TIMEOUT_S = 60.0
# Placeholders in the argument lists: a check opens nothing and writes nothing.
CHECK_RUN_ID, CHECK_OUT = "check", Path("/nonexistent")


def as_run(spec: MeasureSpec, describe: dict) -> MeasureSpec:
    """spec as the node will get it: with the address of the broker psbench starts for it
    (a placeholder here, which a check never connects to)."""
    placeholder = broker_placeholder(describe, spec.transport, spec.options)
    return replace(spec, options=spec.options + placeholder) if placeholder else spec


def requests_of(spec: MeasureSpec, run_id: str = CHECK_RUN_ID) -> list[tuple[str, ...]]:
    """The node's arguments (without its path) for each process of the run."""
    node = paths.node_path()
    return [
        tuple(node_argv(node, spec, plan, run_id, CHECK_OUT, "none")[1:])
        for plan in spec.processes()
    ]


def refuses(spec: MeasureSpec, run_id: str = CHECK_RUN_ID) -> bool:
    """Whether the node refuses a process of the run as spec makes it."""
    return any(refusals(requests_of(spec, run_id)).values())


def refusals(requests: list[tuple[str, ...]]) -> dict[tuple[str, ...], list[dict]]:
    """argument list -> the node's refusals of it ({"setting", "message"} each)."""
    distinct = list(dict.fromkeys(requests))
    if not distinct:
        return {}
    payload = b"".join(b"".join(arg.encode() + b"\0" for arg in args) + b"\0" for args in distinct)
    node = paths.require_node()
    try:
        proc = subprocess.run(
            [str(node), "--check-stdin"],
            input=payload,
            capture_output=True,
            timeout=CHECK_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise UserError(
            f"{node} --check-stdin did not answer within {CHECK_TIMEOUT_S:g} s"
        ) from None
    lines = proc.stdout.decode(errors="replace").splitlines()
    if proc.returncode != 0 or len(lines) != len(distinct):
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise UserError(
            f"{node} --check-stdin failed (exit code {proc.returncode}"
            f"{': ' + tail[0] if tail else ''}); run `make build`"
        )
    return {args: json.loads(line)["refusals"] for args, line in zip(distinct, lines)}


def setting_key(refusal: dict) -> str:
    """The experiment key a refusal concerns: option:K -> options.K; an argument the
    node could not take ("--size: ...") -> its option's name."""
    setting = refusal["setting"]
    if setting.startswith("option:"):
        return "options." + setting[len("option:") :]
    if setting == "arguments" and refusal["message"].startswith("--"):
        return refusal["message"][2:].split(":", 1)[0].replace("-", "_")
    return setting
