"""Progress: a bar on a terminal whose log records never share its line; log lines elsewhere."""

import fcntl
import logging
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from proxboost.experiments.fits import progress
from proxboost.experiments.fits.progress import Progress

REPO = Path(__file__).resolve().parents[1]
TINY = [
    "loss=hinge",
    "algo=residual_prox",
    "protocol.n_splits=4",
    "protocol.max_estimators=20",
    "grid.max_depth=[1,2]",
    "grid.learning_rate=[0.5]",
    "grid.step=[1.0]",
    "n_jobs=1",
]


def _visible_lines(raw: str):
    """What a terminal shows of each line: the text after its last carriage return."""
    return [line.rsplit("\r", 1)[-1] for line in raw.replace("\r\n", "\n").split("\n")]


def _run(tmp_path, *, terminal):
    args = [
        sys.executable,
        str(REPO / "run.py"),
        *TINY,
        f"results_dir={tmp_path / 'res'}",
        f"hydra.run.dir={tmp_path / 'run'}",
    ]
    env = {**os.environ, "COLUMNS": "120"}
    if not terminal:
        done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout + done.stderr
    master, slave = pty.openpty()
    # a terminal of 24 x 120 (a fresh pseudo-terminal has 0 columns: tqdm would draw nothing)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=60) == 0
    os.close(master)
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.slow
def test_on_a_terminal_log_records_never_share_the_bars_line(tmp_path):
    out = _run(tmp_path, terminal=True)
    lines = _visible_lines(out)
    bar = re.compile(r"\d+%\|")
    logs = [ln for ln in lines if "][proxboost" in ln]
    assert logs and any(bar.search(ln) for ln in lines), out[-2000:]
    assert not [ln for ln in logs if bar.search(ln)]


@pytest.mark.slow
def test_without_a_terminal_no_carriage_return_is_printed(tmp_path):
    out = _run(tmp_path, terminal=False)
    assert "\r" not in out and "][proxboost" in out


def test_progress_lines_with_the_time_left_when_not_on_a_terminal(monkeypatch, caplog):
    monkeypatch.setattr(progress, "_on_terminal", lambda: False)
    monkeypatch.setattr(progress, "LOG_INTERVAL", 0.0)
    with caplog.at_level(logging.INFO, logger="proxboost.progress"):
        with Progress(4, "engel/lad/prox") as bar:
            bar.update(1)
            bar.update(3)
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("engel/lad/prox: 1/4 fits, 0:00 elapsed, about 0:00 left")
    assert messages[1].startswith("engel/lad/prox: 4/4 fits")
