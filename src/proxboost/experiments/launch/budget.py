"""A computation in pieces: a time budget for ``run.py`` and ``make results``, and the estimates
of what is left to compute (docs/results.md, "Running in pieces").

**The deadline.** ``run.py ... budget=2h`` (spellings: ``45s``, ``90m``, ``2h``, ``1h30m``, ``0s``)
sets a deadline: the time the command started plus the budget. ``make results BUDGET=2h``
computes one absolute deadline before its first command (``python -m proxboost.budget deadline
2h``) and hands it to every command in the environment variable :data:`DEADLINE_ENV` (a UNIX
time), which wins over ``budget``: the commands of ``make results`` share one deadline, and a
command started after it starts nothing and only reports. Workers of a sweep (the joblib
launcher, submitit) inherit the variable, which the sweep sets before its first job.

**The grace rule.** The deadline is checked before a split's first fit is dispatched (a split:
its grid fits and its refit) and before a curve is started; never in the middle of one. Splits and
curves already started when it passes are finished and stored as usual, so a command ends at most
one split (or curve) after its deadline; the longest single fit of the stored results is a few
minutes, and a split's fits run side by side on the workers. A row is only ever stored whole
(:func:`proxboost.experiments.store.results.write_row`), so a command stopped in any way (the
budget, Ctrl-C, ``kill -9``) leaves intact rows, and the next command computes only what is missing.

**The estimates.** The time of a computation not stored yet is predicted from the stored rows of
the same (protocol, dataset, loss, algo, engine) at any numerics version (``fit_seconds``,
which includes the refit); else, within the protocol, from a two-way model of the stored cells'
median times, log t = a[method] + b[dataset] (a method: loss, algo and engine), fitted by least
squares, when the method and the dataset are linked through stored cells (a slow method's time
on a new dataset is then its time elsewhere scaled by how that dataset compares with the others
for the methods stored on both; the dataset's median over all methods, the rule before, made a
sweep of slow methods on a new dataset look several times shorter than it was); else from the
rows of the same dataset and protocol. A curve from a stored curve of the same settings (any
version), else it is counted as unknown. Times are CPU-seconds of one core (the fits are
single-threaded).
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from proxboost.experiments.fits.deadline import (
    DEADLINE_ENV,
    deadline,
    expired,
    parse_budget,
    share,
    shared_deadline,
)
from proxboost.experiments.fits.deadline import main as deadline_main

__all__ = [
    "DEADLINE_ENV",
    "RESUME_ENV",
    "Estimate",
    "deadline",
    "expired",
    "parse_budget",
    "share",
]

log = logging.getLogger("proxboost.experiments.launch.budget")

#: The command that resumes a budget-stopped computation (``make results`` sets it), printed
#: instead of the ``run.py`` command line.
RESUME_ENV = "PROXBOOST_RESUME"


def resume_command(argv=None, environ=os.environ) -> str:
    """The command that resumes: :data:`RESUME_ENV` if set, else this ``run.py`` command."""
    given = environ.get(RESUME_ENV, "").strip()
    if given:
        return given
    argv = list(sys.argv if argv is None else argv)
    return " ".join(shlex.quote(a) for a in ["python", *argv])


# -- estimates -------------------------------------------------------------------------------------
#: The row columns that name the same computation at any numerics version.
SAME = ("protocol", "dataset", "loss", "algo", "engine")


@functools.lru_cache(maxsize=4)
def _stored_times(results_dir: str):
    """Median ``fit_seconds`` of the stored rows under ``results_dir``: by :data:`SAME`, the
    two-way model of each protocol's cells (:func:`_two_way`), and by (protocol, dataset) for the
    last fallback."""
    from proxboost.experiments.store import results

    df, _ = results.load(results_dir, on_damaged="skip")
    if df.empty or "fit_seconds" not in df.columns:
        return {}, {}, {}
    df = df.dropna(subset=["fit_seconds"])
    cells = df.groupby(list(SAME))["fit_seconds"].median().to_dict()
    by_dataset = df.groupby(["protocol", "dataset"])["fit_seconds"].median().to_dict()
    return cells, _two_way(cells), by_dataset


def _two_way(cells: dict) -> dict:
    """Per protocol, the predicted seconds of every (dataset, method) its stored cells link:
    log t = a[method] + b[dataset] by least squares over the cells of positive time (``cells``:
    median seconds by :data:`SAME`; a method is (loss, algo, engine)). A pair is predicted only
    when the method and the dataset lie in one connected part of the graph whose edges are the
    stored cells (elsewhere the model says nothing about it)."""
    import numpy as np
    from scipy.sparse.csgraph import connected_components

    by_protocol: dict = {}
    for (protocol, dataset, *method), seconds in cells.items():
        if seconds > 0 and math.isfinite(seconds):
            by_protocol.setdefault(protocol, []).append((dataset, tuple(method), seconds))
    predicted = {}
    for protocol, stored in by_protocol.items():
        datasets = sorted({d for d, _, _ in stored})
        methods = sorted({m for _, m, _ in stored})
        column = {("d", d): i for i, d in enumerate(datasets)}
        column.update({("m", m): len(datasets) + i for i, m in enumerate(methods)})
        design = np.zeros((len(stored), len(column)))
        for row, (d, m, _) in enumerate(stored):
            design[row, column["d", d]] = design[row, column["m", m]] = 1.0
        logs = np.log([seconds for _, _, seconds in stored])
        effects = np.linalg.lstsq(design, logs, rcond=None)[0]
        # the connected parts of the graph of datasets and methods whose edges are the stored
        # cells: two columns are linked where a row of the design has both
        _, part = connected_components(design.T @ design, directed=False)
        for d in datasets:
            for m in methods:
                if part[column["d", d]] == part[column["m", m]]:
                    value = effects[column["d", d]] + effects[column["m", m]]
                    predicted[(protocol, d, *m)] = float(np.exp(value))
    return predicted


def split_seconds(results_dir, row: dict) -> float | None:
    """Predicted seconds of one split of the run whose rows look like ``row`` (its base row)."""
    cells, two_way, by_dataset = _stored_times(str(results_dir))
    key = tuple(str(row[c]) for c in SAME)
    for known in (cells, two_way):
        if key in known:
            return float(known[key])
    fallback = by_dataset.get((str(row["protocol"]), str(row["dataset"])))
    return None if fallback is None else float(fallback)


def curve_seconds(path: Path) -> float | None:
    """Predicted seconds of the curve stored at ``path``: the fit time of a stored curve of the
    same settings (the same file name before its hash, any version), the newest first."""
    path = Path(path)
    name = path.name[: -len(".csv")].rsplit("_", 1)[0]
    if not path.parent.is_dir():
        return None
    candidates = sorted(
        (p for p in path.parent.glob(f"{name}_*.csv") if not p.name.endswith(".predictions.csv")),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    from proxboost.experiments.store import results

    for candidate in candidates:
        try:
            seconds = float(results.read_curve(candidate)["seconds"].iloc[-1])
        except Exception:  # damaged, or another layout: try the next one
            continue
        if math.isfinite(seconds):
            return seconds
    return None


@dataclass
class Estimate:
    """Computations to compute and their predicted seconds (``unknown``: without a prediction)."""

    count: int = 0
    seconds: float = 0.0
    unknown: int = 0
    parts: list = field(default_factory=list)

    def add(self, n, seconds_each):
        if n <= 0:
            return
        self.count += n
        if seconds_each is None:
            self.unknown += n
        else:
            self.seconds += n * seconds_each

    def known(self) -> str:
        """``the unknown part`` of the estimate, in words (empty when every time is known)."""
        if not self.unknown:
            return ""
        return f"; {self.unknown} of them without a stored fit time (not counted)"


def _hours(seconds) -> str:
    hours = seconds / 3600.0
    return f"{hours:.2f}" if hours < 10 else f"{hours:.0f}"


def of_runs(runs, specs_by_dir=()) -> Estimate:
    """What is left of the planned ``runs`` (:class:`proxboost.experiments.fits.pipeline.Run`) and
    of the curves ``specs_by_dir`` (``(results_dir, spec)`` pairs): their stored rows are looked up
    now."""
    from proxboost.experiments.plan import curves_plan as curves

    estimate = Estimate()
    for run in runs:
        left = run.n_splits - len(run.stored_splits())
        estimate.add(left, split_seconds(run.location[0], run.base_row) if left else None)
    for results_dir, spec in specs_by_dir:
        if not curves.is_stored(results_dir, spec):
            estimate.add(1, curve_seconds(curves.curve_path(results_dir, spec)))
    return estimate


def start_lines(estimate: Estimate, workers: int, when=None) -> list[str]:
    """The lines before any fit: the estimate, and the deadline when there is one."""
    if estimate.count == 0:
        lines = ["nothing to compute: every row and curve is stored"]
    else:
        wall = _hours(estimate.seconds / max(workers, 1))
        lines = [
            f"{estimate.count} computations to compute, estimated {_hours(estimate.seconds)} "
            f"CPU-hours (about {wall} hours on {workers} worker{'s' * (workers != 1)})"
            + estimate.known()
        ]
    if when is not None:
        left = when - time.time()
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when))
        if left <= 0:
            lines.append(f"budget: the deadline {stamp} has passed; nothing new is started")
        else:
            lines.append(
                f"budget: no new split or curve is started after {stamp} ({left / 60:.0f} min "
                "from now); one in flight then is finished"
            )
    return lines


def end_lines(estimate: Estimate, when, argv=None, environ=os.environ) -> list[str]:
    """The last lines of a command with a deadline: what remains and the command that resumes.
    Under a shared deadline (:data:`DEADLINE_ENV`) what remains is also added to its ledger, for
    the last lines of ``make results`` (:func:`summary_lines`; ``make results`` sets both
    :data:`DEADLINE_ENV` and :data:`RESUME_ENV`)."""
    if when is None:
        return []
    if shared_deadline(environ) is not None and environ.get(RESUME_ENV, "").strip():
        _record(estimate, when)
    return _remain_lines(estimate, argv, environ)


def _remain_lines(estimate: Estimate, argv=None, environ=os.environ) -> list[str]:
    if estimate.count == 0:
        return ["budget: everything is computed"]
    unknown = f", {estimate.unknown} of unknown time" if estimate.unknown else ""
    return [
        f"Budget reached: {estimate.count} computations remain (about "
        f"{_hours(estimate.seconds)} h of fits{unknown}) — resume with: "
        + resume_command(argv, environ)
    ]


def _ledger(when) -> Path:
    """Where the commands of one shared deadline add up what remains (the temporary folder)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"proxboost-budget-{uid}-{when!r}.jsonl"


def _record(estimate: Estimate, when) -> None:
    line = json.dumps([estimate.count, estimate.seconds, estimate.unknown]) + "\n"
    try:
        with open(_ledger(when), "a") as fh:  # one short append: whole lines, even side by side
            fh.write(line)
    except OSError as exc:  # the lines of the command itself were printed: nothing lost
        log.warning("could not add up what remains in %s: %s", _ledger(when), exc)


def summary_lines(environ=os.environ) -> list[str]:
    """The last lines of ``make results`` under a budget: what its commands left, added up, and
    the command that resumes (the ledger is removed); no lines without a shared deadline."""
    when = shared_deadline(environ)
    if when is None:
        return []
    total = Estimate()
    ledger = _ledger(when)
    try:
        text = ledger.read_text()
    except OSError:
        text = ""
    for line in text.splitlines():
        try:
            count, seconds, unknown = json.loads(line)
        except (ValueError, TypeError):
            continue
        total.count, total.seconds, total.unknown = (
            total.count + count,
            total.seconds + seconds,
            total.unknown + unknown,
        )
    ledger.unlink(missing_ok=True)
    return _remain_lines(total, environ=environ)


# -- command line ----------------------------------------------------------------------------------
def main(argv=None) -> int:
    """``python -m proxboost.budget deadline <budget>``: the UNIX time ``<budget>`` from now
    (``make results BUDGET=2h``); a bad spelling: one line on stderr, exit code 2 (its stdout,
    ``invalid``, is then refused by every ``run.py`` that reads it).
    ``python -m proxboost.budget summary``: the last lines of ``make results`` under a budget
    (:func:`summary_lines`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["summary"]:
        try:
            lines = summary_lines()
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for line in lines:
            print(line)
        return 0
    if len(args) != 2 or args[0] != "deadline":
        usage = "usage: python -m proxboost.budget deadline <budget, e.g. 2h> | summary"
        print(usage, file=sys.stderr)
        return 2
    return deadline_main(args[1:])


if __name__ == "__main__":
    raise SystemExit(main())
