"""The sweep's progress display: redrawn in place on a terminal, plain lines otherwise."""

import io

from psbench.run.progress import Progress, duration_text


def test_plain_lines_one_per_finished_run():
    out = io.StringIO()
    progress = Progress(3, stream=out, tty=False)
    progress.start("udp-64B")
    assert out.getvalue() == ""
    progress.finish("udp-64B", "ok", 2.0)
    progress.start("shm-64B")
    progress.finish("shm-64B", "crashed", 4.0)
    progress.close()
    lines = out.getvalue().splitlines()
    assert lines == [
        "[1/3] udp-64B: ok (2.0 s); 0 failed; ETA 0:04",
        "[2/3] shm-64B: crashed (4.0 s); 1 failed; ETA 0:03",
    ]


def test_terminal_redraws_one_line_and_keeps_failures():
    out = io.StringIO()
    progress = Progress(2, stream=out, tty=True)
    progress.start("udp-64B")
    progress.finish("udp-64B", "timeout", 1.0)
    progress.start("shm-64B")
    progress.close()
    text = out.getvalue()
    assert "\n" in text  # the failure stays on its own line
    kept = [line for line in text.split("\n") if "timeout" in line]
    assert kept and kept[0].endswith("[1/2] udp-64B: timeout (1.0 s); 1 failed; ETA 0:01")
    redraws = text.split("\r\x1b[2K")
    assert any(
        r.startswith("[##########..........] 1/2  1 failed") and "now: shm-64B" in r
        for r in redraws
    )
    assert text.endswith("\r\x1b[2K")  # the bar is gone before the summary prints


def test_duration_text():
    assert [duration_text(s) for s in (None, 0, 59.6, 61, 3725)] == [
        "?",
        "0:00",
        "1:00",
        "1:01",
        "1:02:05",
    ]
