"""Whether a late joiner's "written before it joined" is the samples before the pause:
the publisher's pause frames them only if everything written before it had already got
through (to the run's own subscribers) when the late joiner's reader was created. On a
busy machine a client library or broker can still hold samples written before the pause
and hand them on after the late joiner subscribed, as live ones (seen with a broker:
33 of them). Read from the run's own subscribers' samples (one machine's clock)."""

from pathlib import Path

import numpy as np

from psbench.results.samples import SamplesFileError, read_samples


def still_on_their_way(run_dir: Path, subscribers: dict, joined_ns: int, began_ns: int):
    """How many samples written before the pause (send_ns < began_ns) reached the run's
    own subscribers (name -> summary) only after joined_ns; None when none could be read."""
    counted = None
    for name, summary in subscribers.items():
        try:
            samples = read_samples(run_dir / f"{name}.samples")
        except (OSError, SamplesFileError):
            continue
        latency_from = (summary.get("config") or {}).get("latency_from", "intended")
        before = samples.records["send_ns"] < began_ns
        late = before & (samples.arrival_ns(latency_from) > joined_ns)
        counted = (counted or 0) + int(np.count_nonzero(late))
    return counted
