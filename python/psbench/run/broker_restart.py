"""A broker killed mid-stream and started again (`--restart-broker AT:DOWN`): AT seconds
after the first process says its measurement window began, the run's broker is killed
(SIGKILL: a crash) and DOWN seconds later started again on its port, configuration and
data (ServicePool.restart). What happened when is stamped on CLOCK_MONOTONIC, the clock
of the nodes' send_ns, so that the samples can be placed before, during and after it."""

import threading
import time

from psbench.base.errors import UserError

# How long after the run the restart may still take to finish (a broker slow to start).
FINISH_GRACE_S = 90.0


NO_BROKER_TO_RESTART = (
    "psbench restarts the one broker it starts for the run; this driver has none here "
    "(no broker in its manifest, or its own broker= option given)"
)


def broker_of(used: list) -> object:
    """The one broker psbench started for the run, or a UserError saying why none."""
    brokers = [s for s in used if s.definition.broker and s.proc is not None]
    if len(brokers) != 1:
        raise UserError(f"restart_broker: {NO_BROKER_TO_RESTART} ({len(brokers)} found)", 2)
    if brokers[0].remote:
        raise UserError("restart_broker: a broker on a real machine is not restarted", 2)
    return brokers[0]


class BrokerRestart:
    """on_window(edge, ...) from the runner starts the clock at the first window's
    begin; finish() waits for the restart to be over and returns run.json's block."""

    def __init__(self, pool, service, at_s: float, down_s: float):
        self.pool, self.service = pool, service
        self.at_s, self.down_s = at_s, down_s
        self.stamps: dict[str, int] = {}
        self.error: str | None = None
        self._cancel = threading.Event()
        self._abandon = threading.Event()  # the run was interrupted: none started again
        self._thread: threading.Thread | None = None

    def on_window(self, edge: str, *_):
        if edge == "begin" and self._thread is None:
            self.stamps["window_began"] = time.monotonic_ns()
            self._thread = threading.Thread(target=self._restart, daemon=True)
            self._thread.start()

    def _restart(self) -> None:
        if self._cancel.wait(self.at_s):
            return  # the run ended first
        try:
            self.pool.restart(self.service, self.down_s, self._stamp, self._abandon)
        except Exception as exc:  # recorded: the run is then not a measurement
            self.error = str(exc)

    def _stamp(self, event: str) -> None:
        self.stamps[event] = time.monotonic_ns()

    def abandon(self) -> None:
        """The run was interrupted: a broker still down stays down, and finish() does not
        wait out its down time."""
        self._abandon.set()

    def finish(self) -> dict:
        self._cancel.set()
        if self._thread is not None:
            self._thread.join(self.down_s + FINISH_GRACE_S)
        if self._thread is not None and self._thread.is_alive():
            self.error = self.error or "the broker was still starting when the run was over"
        killed = "killed" in self.stamps
        return {
            "at_s": self.at_s,
            "down_s": self.down_s,
            "signal": "SIGKILL",
            "service": self.service.definition.name,
            "done": killed and "ready" in self.stamps and self.error is None,
            "why_not": None if killed else "the run ended before the broker was to be killed",
            "error": self.error,
            **{f"{event}_ns": self.stamps.get(event) for event in
               ("window_began", "killed", "started", "ready")},
        }  # fmt: skip
