"""Progress of long loops, with the time left, that never shares a line with a log record.

On a terminal: a tqdm bar, and for its lifetime every log record printed to the console goes
through ``tqdm.write`` (``logging_redirect_tqdm``): the record appears above the bar, never on its
line. Elsewhere (a file, a pipe, a Slurm log): no carriage-return bar at all, but one log line
at most every :data:`LOG_INTERVAL` seconds with the count, the elapsed time and the time left.
"""

from __future__ import annotations

import logging
import sys
import time

from tqdm.auto import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from proxboost.experiments.system import private_api

log = logging.getLogger("proxboost.progress")

#: Seconds between two progress lines when the output is not a terminal.
LOG_INTERVAL = 30.0


def _on_terminal() -> bool:
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """``update(n)``, ``set_postfix_str(text)``, ``close()``; a context manager."""

    def __init__(self, total, desc, unit="fit", enabled=True, **bar_options):
        self.total, self.desc, self.unit, self.n = total, desc, unit, 0
        self.start = self.last = time.perf_counter()
        self.bar = self._redirect = None
        if not enabled:
            return
        if _on_terminal():
            private_api.use_a_thread_lock_for_tqdm()  # no named semaphore in launcher workers
            self._redirect = logging_redirect_tqdm()
            self._redirect.__enter__()
            self.bar = tqdm(total=total, desc=desc, unit=unit, dynamic_ncols=True, **bar_options)
        else:
            self._lines = True

    def update(self, n=1):
        self.n += n
        if self.bar is not None:
            self.bar.update(n)
        elif getattr(self, "_lines", False) and time.perf_counter() - self.last >= LOG_INTERVAL:
            self._log_line()

    def set_postfix_str(self, text, refresh=False):
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=refresh)

    def _log_line(self):
        self.last = now = time.perf_counter()
        elapsed = now - self.start
        left = elapsed * (self.total - self.n) / self.n if self.n else float("nan")
        shown = "unknown" if left != left else _duration(left)
        log.info(
            "%s: %s/%s %ss, %s elapsed, about %s left",
            self.desc,
            f"{self.n:g}",
            f"{self.total:g}",
            self.unit,
            _duration(elapsed),
            shown,
        )

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        if self._redirect is not None:
            self._redirect.__exit__(None, None, None)
            self._redirect = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
