"""The deadline of a command run under a budget (docs/results.md, "Running in pieces").

``run.py ... budget=2h`` sets the deadline to the time the command started plus the budget; ``make
results BUDGET=2h`` computes one absolute deadline before its first command and hands it to every
command in :data:`DEADLINE_ENV` (the rules: :mod:`proxboost.experiments.launch.budget`). The fits
check :func:`expired` before a split or a curve is started, never in the middle of one.

This module uses the standard library only: the Makefile runs it as a script with the system's
Python (``python src/proxboost/experiments/fits/deadline.py 2h``), before ``.venv`` exists.
"""

from __future__ import annotations

import math
import os
import re
import sys
import time

#: The shared deadline of the commands of ``make results`` (a UNIX time; empty: none).
DEADLINE_ENV = "PROXBOOST_DEADLINE"

_SPELLING = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")

SPELLINGS = "a duration such as 45s, 90m, 2h or 1h30m"


def parse_budget(text) -> float | None:
    """Seconds of a budget spelled ``45s``, ``90m``, ``2h``, ``1h30m`` (hours, minutes, seconds,
    in this order, whole numbers); None for no budget (None or an empty string). ValueError
    names the expected spellings."""
    if text is None:
        return None
    if isinstance(text, bool) or not isinstance(text, str):
        raise ValueError(f"budget must be {SPELLINGS}, got {text!r}")
    spelled = text.strip().lower()
    if not spelled:
        return None
    match = _SPELLING.match(spelled)
    if match is None or not any(match.groups()):
        raise ValueError(f"budget must be {SPELLINGS}, got {text!r}")
    h, m, s = (int(g or 0) for g in match.groups())
    return float(h * 3600 + m * 60 + s)


def shared_deadline(environ=os.environ) -> float | None:
    """The deadline handed down in :data:`DEADLINE_ENV`, or None; ValueError when it is not a
    UNIX time."""
    value = environ.get(DEADLINE_ENV, "").strip()
    if not value:
        return None
    try:
        when = float(value)
    except ValueError:
        when = math.nan
    if not math.isfinite(when):
        raise ValueError(
            f"{DEADLINE_ENV} must be a UNIX time (seconds), got {value!r}: set a budget with "
            f"budget=<{SPELLINGS}> or make results BUDGET=<duration>"
        )
    return when


def deadline(budget=None, started=None, environ=os.environ) -> float | None:
    """The deadline of this command (a :func:`time.time` value) or None: :data:`DEADLINE_ENV`
    if set, else ``started`` (default: when this process started) plus ``budget``. ValueError
    for a bad budget or variable."""
    seconds = parse_budget(budget)
    shared = shared_deadline(environ)
    if shared is not None:
        return shared
    if seconds is None:
        return None
    if started is None:
        from proxboost.experiments.store.results import (
            process_started,  # lazy: results imports pandas
        )

        started = process_started()
    return started + seconds


def expired(when) -> bool:
    """Whether the deadline ``when`` (None: none) has passed."""
    return when is not None and time.time() >= when


def share(when, environ=os.environ) -> None:
    """Hand the deadline to the processes this one starts (launcher workers, submitit jobs)."""
    if when is not None:
        environ[DEADLINE_ENV] = repr(float(when))


def main(argv=None) -> int:
    """``deadline.py <budget>``: the UNIX time ``<budget>`` from now
    (``make results BUDGET=2h``); a bad spelling: one line on stderr, exit code 2 (its stdout,
    ``invalid``, is then refused by every ``run.py`` that reads it)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: deadline.py <budget, e.g. 2h>", file=sys.stderr)
        return 2
    try:
        seconds = parse_budget(args[0])
    except ValueError as exc:
        print("invalid")
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("" if seconds is None else repr(time.time() + seconds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
