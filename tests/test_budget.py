"""A computation in pieces (proxboost.experiments.launch.budget): budget spellings, a deadline that
passes mid-sweep (nothing new started, the rows stored intact and complete, the rerun computes only
the missing ones), a sweep killed outright, the estimate lines and the last lines of ``make
results``.
"""

import subprocess
import sys
import time

import pytest
from conftest import kill_run_py_at_first_row, run_py_command, run_py_env

from proxboost.experiments.fits import pipeline
from proxboost.experiments.launch import budget
from proxboost.experiments.store import results

RUN = dict(
    dataset="regression",
    dataset_params={"n_samples": 60, "n_features": 4},
    loss="lad",
    algo="gradient",
    grid={"max_depth": [1], "learning_rate": [0.1, 0.5]},
    n_splits=5,
    max_estimators=5,
    fractions=(0.5, 0.25, 0.25),
    seed=0,
)


@pytest.mark.parametrize(
    "text, seconds",
    [("45s", 45), ("90m", 5400), ("2h", 7200), ("1h30m", 5400), ("1h0m5s", 3605), ("0s", 0)],
)
def test_budget_spellings(text, seconds):
    assert budget.parse_budget(text) == seconds


@pytest.mark.parametrize("text", ["2", "2x", "h", "1.5h", "30m1h", "-1h", "2 hours", 90, True])
def test_bad_budgets_are_refused_naming_the_spellings(text):
    with pytest.raises(ValueError, match="budget must be a duration such as 45s, 90m, 2h"):
        budget.parse_budget(text)


def test_the_shared_deadline_wins_and_a_bad_one_is_refused():
    assert budget.deadline(None, environ={}) is None
    assert budget.deadline("1h", started=100.0, environ={}) == 3700.0
    shared = {budget.DEADLINE_ENV: "1234.5"}
    assert budget.deadline("1h", started=100.0, environ=shared) == 1234.5
    assert budget.deadline(None, environ={budget.DEADLINE_ENV: ""}) is None
    with pytest.raises(ValueError, match="PROXBOOST_DEADLINE must be a UNIX time"):
        budget.deadline(None, environ={budget.DEADLINE_ENV: "invalid"})
    with pytest.raises(ValueError, match="budget must be"):  # checked even when the variable wins
        budget.deadline("2x", environ=shared)


def test_the_deadline_command_of_make_results(capsys):
    before = time.time()
    assert budget.main(["deadline", "90m"]) == 0
    assert before + 5400 <= float(capsys.readouterr().out) <= time.time() + 5400
    assert budget.main(["deadline", "9z"]) == 2
    out = capsys.readouterr()
    assert out.out == "invalid\n" and out.err.count("\n") == 1 and "got '9z'" in out.err


def test_a_deadline_passing_mid_sweep_starts_nothing_new_and_the_rerun_computes_the_rest(
    tmp_path, monkeypatch
):
    run = pipeline.plan_run(**RUN, results_dir=str(tmp_path))
    # the deadline passes as the first row is stored: split 1, dispatched with split 0's refit
    # (one worker: one split a wave), is in flight and finished; no split is started after
    stored = []
    write_row = results.write_row

    def write_and_count(*args, **kwargs):
        stored.append(write_row(*args, **kwargs))
        return stored[-1]

    monkeypatch.setattr(results, "write_row", write_and_count)
    monkeypatch.setattr(pipeline, "expired", lambda when: when is not None and bool(stored))
    df = pipeline.execute(run, n_jobs=1, progress=False, deadline=1.0)
    assert sorted(df["split"]) == [0, 1] and len(stored) == 2
    assert df["test_loss"].notna().all() and df["fit_seconds"].gt(0).all()  # complete rows
    assert results.load(tmp_path).shape == df.shape  # every file intact (sealed)
    assert not list(tmp_path.rglob("*.claim"))  # no claim left behind
    # what remains, estimated from the stored fit times of the same computation
    left = budget.of_runs([run])
    assert left.count == 3 and left.unknown == 0
    assert left.seconds == pytest.approx(3 * df["fit_seconds"].median())
    (line,) = budget.end_lines(left, 1.0, argv=["run.py", "budget=1h"], environ={})
    assert line.startswith("Budget reached: 3 computations remain (about ")
    assert line.endswith("h of fits) — resume with: python run.py budget=1h")

    # the rerun without a budget: only the three missing rows
    stamps = {p: p.stat().st_mtime_ns for p in stored}
    monkeypatch.undo()
    stored.clear()
    monkeypatch.setattr(results, "write_row", write_and_count)
    df = pipeline.execute(run, n_jobs=1, progress=False)
    assert sorted(df["split"]) == list(range(5)) and len(stored) == 3
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    assert budget.of_runs([run]).count == 0


def test_a_method_not_stored_on_a_dataset_is_estimated_from_its_times_elsewhere(monkeypatch):
    """Fit times that are a method's factor times a dataset's (as a fit's cost roughly is): a
    missing cell is predicted as their product; the dataset's median over the methods stored on
    it, the rule before, is 50 times too short here. An exact cell wins; a method stored nowhere,
    or a pair the stored cells do not link, falls back to the dataset's median."""
    pd = pytest.importorskip("pandas")
    method = {"quantile_forest": 40.0, "catboost": 15.0, "lightgbm": 1.0, "prox": 0.5}
    size = {"bostonhousing": 1.0, "redwine": 3.2, "whitewine": 9.0}
    missing = {("whitewine", "quantile_forest"), ("whitewine", "catboost")}
    rows = [
        dict(protocol="p", dataset=d, loss="lad", algo=m, engine="none", fit_seconds=f * s * k)
        for d, s in size.items()
        for m, f in method.items()
        if (d, m) not in missing
        for k in (1.0, 1.01, 1.02)  # three splits: the median is the middle one
    ]
    # another protocol whose two cells share neither their dataset nor their method
    rows += [
        dict(
            protocol="q", dataset="engel", loss="lad", algo="prox", engine="exact", fit_seconds=2.0
        ),
        dict(
            protocol="q", dataset="crabs", loss="lad", algo="lgbm", engine="none", fit_seconds=5.0
        ),
    ]
    monkeypatch.setattr(results, "load", lambda *args, **kwargs: (pd.DataFrame(rows), []))
    budget._stored_times.cache_clear()
    try:

        def estimate(protocol, dataset, algo, engine="none"):
            row = dict(protocol=protocol, dataset=dataset, loss="lad", algo=algo, engine=engine)
            return budget.split_seconds("results", row)

        assert estimate("p", "whitewine", "quantile_forest") == pytest.approx(40 * 9 * 1.01)
        assert estimate("p", "whitewine", "catboost") == pytest.approx(15 * 9 * 1.01)
        assert estimate("p", "whitewine", "lightgbm") == 9 * 1.01  # its own cell
        whitewine_median = float(
            pd.Series([r["fit_seconds"] for r in rows if r["dataset"] == "whitewine"]).median()
        )
        assert estimate("p", "whitewine", "xgboost") == whitewine_median  # stored nowhere
        assert estimate("q", "engel", "lgbm") == 2.0  # not linked: engel's median
        assert estimate("q", "sniffer", "prox", "exact") is None  # nothing on the dataset
    finally:
        budget._stored_times.cache_clear()


def test_estimate_lines(tmp_path):
    estimate = budget.Estimate()
    assert budget.start_lines(estimate, 2) == ["nothing to compute: every row and curve is stored"]
    estimate.add(4, 1800.0)
    estimate.add(2, None)
    (line,) = budget.start_lines(estimate, 2)
    assert line == (
        "6 computations to compute, estimated 2.00 CPU-hours (about 1.00 hours on 2 workers); "
        "2 of them without a stored fit time (not counted)"
    )
    lines = budget.start_lines(estimate, 1, time.time() + 600)
    assert lines[1].startswith("budget: no new split or curve is started after ")
    assert "passed" in budget.start_lines(estimate, 1, time.time() - 1)[1]
    assert budget.end_lines(estimate, None) == []  # no budget: no end lines
    assert budget.end_lines(budget.Estimate(), 1.0, environ={}) == [
        "budget: everything is computed"
    ]


def test_the_last_lines_of_make_results_add_up_its_commands(monkeypatch, tmp_path):
    monkeypatch.setattr(budget.tempfile, "gettempdir", lambda: str(tmp_path))
    env = {budget.DEADLINE_ENV: "1000.0", budget.RESUME_ENV: "make results BUDGET=2h"}
    for count, seconds in ((2, 3600.0), (0, 0.0), (3, 1800.0)):
        estimate = budget.Estimate()
        estimate.add(count, seconds / max(count, 1))
        budget.end_lines(estimate, 1000.0, environ=env)
    assert budget.summary_lines(environ=env) == [
        "Budget reached: 5 computations remain (about 1.50 h of fits) — resume with: "
        "make results BUDGET=2h"
    ]
    assert not list(tmp_path.iterdir())  # the ledger is removed
    assert budget.summary_lines(environ={}) == []  # no budget: nothing
    # a run.py given a deadline by hand (not by make results) adds nothing up
    budget.end_lines(estimate, 1000.0, environ={budget.DEADLINE_ENV: "1000.0"})
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_run_py_budget_lines_and_refusal(tmp_path, run_dirs):
    args = [
        "-m",
        "algo=gradient,prox",
        "loss=lad",
        "grid=smoke",
        "protocol.n_splits=2",
        "protocol.max_estimators=5",
        "dataset.params.n_samples=100",
        "n_jobs=1",
        "progress=false",
        *run_dirs,
    ]

    def run_py(*extra, env=None):
        return subprocess.run(
            run_py_command(*args, *extra),
            cwd=tmp_path,
            env={**run_py_env(tmp_path), **(env or {})},
            capture_output=True,
            text=True,
            timeout=180,
        )

    bad = run_py("budget=2x")
    text = bad.stdout + bad.stderr
    assert bad.returncode == 2 and "Traceback" not in text, text
    assert text.count("budget must be a duration such as 45s, 90m, 2h or 1h30m, got '2x'") == 1
    assert "Launching" not in text
    bad = run_py(env={budget.DEADLINE_ENV: "invalid"})
    text = bad.stdout + bad.stderr
    assert bad.returncode == 2 and text.count("PROXBOOST_DEADLINE must be a UNIX time") == 1

    # a budget spent already (0s): the estimate, nothing started, what remains and how to resume
    spent = run_py("budget=0s")
    text = spent.stdout + spent.stderr
    assert spent.returncode == 0, text
    assert text.count("4 computations to compute, estimated") == 1
    assert "without a stored fit time" in text  # nothing stored to predict from
    assert text.count("Budget reached: 4 computations remain") == 1
    assert "resume with: python " in text and "run.py -m algo=gradient,prox" in text
    assert not list((tmp_path / "res").rglob("split-*.csv"))


@pytest.mark.slow
def test_a_sweep_killed_outright_leaves_intact_rows_and_the_rerun_computes_only_the_rest(
    tmp_path, run_dirs
):
    sweep = [
        "-m",
        "algo=gradient,prox",
        "loss=lad",
        "grid=smoke",
        "protocol.n_splits=4",
        "protocol.max_estimators=20",
        "dataset.params.n_samples=200",
        "n_jobs=1",
        "progress=false",
        *run_dirs,
    ]
    res = tmp_path / "res"
    before = kill_run_py_at_first_row(tmp_path, *sweep, timeout=150)
    assert 1 <= len(before) < 8, "the sweep should have been killed halfway"
    assert len(results.load(res)) == len(before)  # every stored row intact (sealed)

    out = subprocess.run(
        run_py_command(*sweep),
        cwd=tmp_path,
        env=run_py_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert f"{8 - len(before)} computations to compute, estimated" in text
    df = results.load(res)
    assert len(df) == 8 and not df.duplicated(list(results.KEY_COLUMNS)).any()
    assert {f: f.stat().st_mtime_ns for f in before} == before  # stored rows not redone


@pytest.mark.slow
def test_module_runs_as_a_command():
    out = subprocess.run(
        [sys.executable, "-m", "proxboost.experiments.launch.budget", "deadline", "1h"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and float(out.stdout) > time.time()


def test_curves_start_none_after_the_deadline_and_are_estimated_from_stored_ones(tmp_path):
    from proxboost.experiments.fits.curves import run_curves
    from proxboost.experiments.plan.curves_plan import RunSpec, curve_path, is_stored

    specs = [
        RunSpec("pieces", "regression", "lad", "gradient", 2, 0.1, 5, seed=s, dataset_params={})
        for s in (0, 1)
    ]
    lines = []
    run_curves("pieces", specs, tmp_path, progress=False, log=lines.append, deadline=1.0)
    assert not any(is_stored(tmp_path, s) for s in specs)
    assert lines[-1].endswith("2 curve(s) not started")
    assert budget.of_runs([], [(tmp_path, s) for s in specs]).unknown == 2
    run_curves("pieces", specs[:1], tmp_path, progress=False, log=lines.append)
    assert is_stored(tmp_path, specs[0]) and not is_stored(tmp_path, specs[1])
    seconds = budget.curve_seconds(curve_path(tmp_path, specs[0]))
    assert seconds is not None and seconds > 0
    # the same settings at another version (another hash): predicted from the stored curve
    other = curve_path(tmp_path, specs[0]).with_name(
        curve_path(tmp_path, specs[0]).name.rsplit("_", 1)[0] + "_000000000000.csv"
    )
    assert budget.curve_seconds(other) == seconds
    left = budget.of_runs([], [(tmp_path, s) for s in specs])
    assert (left.count, left.unknown) == (1, 1)  # seed 1: no stored curve of its settings


def test_make_results_computes_its_deadline_before_the_environment_exists():
    """`make results BUDGET=2h` on a fresh clone evaluates the deadline before `.venv` exists:
    the Makefile runs fits/deadline.py as a script with the system Python, which needs no installed
    package (here: no site-packages at all, `-S`)."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    assert (
        "$(PYTHON) src/proxboost/experiments/fits/deadline.py '$(BUDGET)'"
        in (root / "Makefile").read_text()
    )
    script = root / "src" / "proxboost" / "experiments" / "fits" / "deadline.py"
    now = time.time()
    out = subprocess.run([sys.executable, "-S", str(script), "90m"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert now + 5400 <= float(out.stdout) <= time.time() + 5400
    bad = subprocess.run([sys.executable, "-S", str(script), "2x"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stdout.strip() == "invalid"


@pytest.mark.parametrize("passed", [True, False])
def test_make_results_starts_no_line_after_the_deadline_and_says_how_many_it_left(tmp_path, passed):
    """Each line of experiments/results.sh would plan its whole sweep only to start nothing, so
    once the deadline has passed the shared run() skips the remaining lines and one line at the
    end counts them; before the deadline every line is printed and run."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    script = tmp_path / "lines.sh"
    marker = tmp_path / "ran"
    script.write_text(
        f"source {root / 'experiments' / '_run.sh'}\n"
        + "".join(f"run touch {marker}-{k}\n" for k in range(3))
    )
    when = time.time() + (-5 if passed else 3600)
    env = {
        "PATH": "/usr/bin:/bin",
        "PROXBOOST_DEADLINE": f"{when:.3f}",
        "PROXBOOST_RESUME": "make results BUDGET=2h",
    }
    out = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    ran = sorted(p.name for p in tmp_path.glob("ran-*"))
    if passed:
        assert ran == [] and out.stdout.splitlines() == [
            "budget reached: 3 line(s) not started; make results BUDGET=2h continues them"
        ]
    else:
        assert ran == ["ran-0", "ran-1", "ran-2"] and "budget reached" not in out.stdout
        assert out.stdout.splitlines() == [f"touch {marker}-{k}" for k in range(3)]


@pytest.mark.parametrize("target", ["results", "benchmark"])
def test_both_sweeps_of_the_makefile_run_in_pieces(target):
    """`make results` and `make benchmark` take the same BUDGET: one deadline for their lines,
    and the command that continues them."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    assert f"{target}: private export PROXBOOST_DEADLINE = $(DEADLINE)" in text
    assert (
        f"{target}: private export PROXBOOST_RESUME = "
        f"$(if $(BUDGET),make {target} BUDGET=$(BUDGET),)"
    ) in text
