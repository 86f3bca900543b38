"""Progress of a sweep on stderr: one line redrawn in place on a terminal (bar,
done/total, failed count, current run, ETA), one plain line per finished run otherwise
(CI logs, files). With at_most, total is an upper bound that may shrink (a rate
search's runs): it and the ETA read "at most"."""

import shutil
import sys
import time

BAR_WIDTH = 20


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    def __init__(self, total: int, stream=None, tty: bool | None = None, at_most: bool = False):
        self.stream = stream or sys.stderr
        self.at_most = at_most
        self.tty = self.stream.isatty() if tty is None else tty
        self.total = total
        self.done = 0
        self.failed = 0
        self.durations: list[float] = []
        self.current: str | None = None
        self.started: float | None = None
        self._drawn = False

    def eta(self) -> float | None:
        """Mean duration of the runs so far times what is left (the current run's
        elapsed time counted as spent)."""
        if not self.durations:
            return None
        mean = sum(self.durations) / len(self.durations)
        left = (self.total - self.done) * mean
        if self.started is not None:
            left -= min(time.monotonic() - self.started, mean)
        return max(left, 0.0)

    def start(self, label: str) -> None:
        self.current = label
        self.started = time.monotonic()
        if self.tty:
            self._draw()

    def finish(
        self,
        label: str,
        status: str,
        seconds: float,
        failed: bool | None = None,
        note: str | None = None,
    ) -> None:
        """failed: whether it counts as failed (default: status is not ok); note: more
        to say on its line (a rate search's bracket)."""
        failed = status != "ok" if failed is None else failed
        self.done += 1
        self.failed += failed
        self.durations.append(seconds)
        self.current, self.started = None, None
        line = (
            f"[{self._count()}] {label}: {status} ({seconds:.1f} s); "
            + (f"{note}; " if note else "")
            + f"{self.failed} failed; {self._eta_text()}"
        )
        if not self.tty:
            print(line, file=self.stream, flush=True)
            return
        if failed or note:  # kept above the bar, so that no failure scrolls away unseen
            self._clear()
            print(line, file=self.stream, flush=True)
        self._draw()

    def _count(self) -> str:
        return f"{self.done}/{'at most ' if self.at_most else ''}{self.total}"

    def _eta_text(self) -> str:
        return f"ETA {'at most ' if self.at_most else ''}{duration_text(self.eta())}"

    def close(self) -> None:
        if self.tty and self._drawn:
            self._clear()

    def _clear(self) -> None:
        self.stream.write("\r\x1b[2K")
        self.stream.flush()
        self._drawn = False

    def _draw(self) -> None:
        filled = BAR_WIDTH * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        now = f"  now: {self.current}" if self.current else ""
        text = f"[{bar}] {self._count()}  {self.failed} failed  {self._eta_text()}{now}"
        width = shutil.get_terminal_size((100, 24)).columns
        self.stream.write("\r\x1b[2K" + text[: max(width - 1, 10)])
        self.stream.flush()
        self._drawn = True
