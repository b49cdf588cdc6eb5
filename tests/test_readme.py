"""The README's examples and commands, and those of the docs pages, run as written."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
TEXT = (REPO / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)
#: Every page whose commands are run, checked or listed: the README and the docs pages.
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
README_MAX_LINES = 250


def _python_blocks(page: str, after: str = "") -> list[str]:
    """The ``python`` blocks of ``docs/<page>``, those after the heading ``after`` if given."""
    text = (REPO / "docs" / page).read_text()
    if after:
        text = text[text.index(after) :]
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_readme_is_short():
    """A newcomer reads it in ten minutes: tables and details live in docs/."""
    assert len(TEXT.splitlines()) <= README_MAX_LINES


def test_readme_example_runs():
    assert BLOCKS, "README.md has no python example"
    namespace = {}
    exec(compile(BLOCKS[0], "README.md", "exec"), namespace)
    assert namespace["reg"].train_loss_[-1] < namespace["reg"].train_loss_[0]
    assert set(namespace["clf"].predict(namespace["X"])) <= {"yes", "no"}


def test_estimator_examples_run(capsys):
    """docs/estimators.md's examples run in order, in one namespace."""
    namespace = {}
    for block in _python_blocks("estimators.md", after="## Examples"):
        exec(compile(block, "docs/estimators.md", "exec"), namespace)
    np.testing.assert_allclose(namespace["proba"].sum(axis=1), 1.0)
    assert namespace["wreg"].eval_loss_.shape == (101,)
    es = namespace["es"]
    assert es.n_iter_ < 2000 and es.train_loss_.shape == (es.n_iter_ + 1,)
    assert set(np.argsort(es.feature_importances_)[-2:]) == {0, 1}
    assert "Train Loss" in capsys.readouterr().out
    assert namespace["authors"].tie_rule == "authors"


def test_data_example_runs(data_mirror):
    (block,) = [b for b in _python_blocks("data.md") if "load_dataset" in b]
    namespace = {}
    exec(compile(block, "docs/data.md", "exec"), namespace)
    assert namespace["X"].shape == (235, 1) and namespace["info"].origin in ("mirror", "cache")


# -- the commands of the README and the docs pages ----------------------------------------------
# Every command of the README and of the docs pages is run here as written (in a temporary
# folder, with overrides that make it cheap appended), or checked without fitting (every other
# `python run.py` line: its jobs pass the checks a sweep makes before any fit), or listed in
# NOT_RUN with the reason. A command added to a page, or edited, must be one of these, so a broken
# command fails here.
#: Overrides that make a `python run.py` line cheap: 2 splits, 1 grid point, 5 iterations.
TINY = [
    "protocol.n_splits=2",
    "protocol.max_estimators=5",
    "grid.max_depth=[1]",
    "grid.learning_rate=[0.5]",
    "grid.step=[1.0]",
    "n_jobs=1",
    "progress=false",
]

#: Commands run as written, in this order, in one temporary folder (later ones read the rows of
#: earlier ones), with these overrides appended.
RUN = {
    "python run.py loss=hinge algo=residual_prox": TINY,
    "python run.py dataset=engel loss=lad algo=prox grid=paper": TINY,
    "python run.py --cfg job --resolve": [],
    "python -m proxboost.sweep runs": [],
    "python -c \"from proxboost.experiments.store.results import load; print(load('runs'))\"": [],
    "python -m proxboost.datasets --prefetch": [],
    "python -m proxboost.datasets --prefetch --docs": [],
    "python -m proxboost.datasets": [],
    "python -m proxboost.report --cpu-table": [],  # on an empty results/ folder
    "python -m proxboost.report --baselines-table": [],  # on an empty results/ folder
    "python -m proxboost.report --results results": [],  # on an empty results/ folder
}

#: Commands not run, and why (a make target is still checked to exist, with `make -n`).
NOT_RUN = {
    "git clone <this repository> proxboost && cd proxboost": (
        "the repository's address is a placeholder"
    ),
    "pip install .": "tests/test_install.py installs the core into a fresh environment",
    "pip install '.[experiments]'": "it would install into the environment running the tests",
    "make test": "it runs this test suite",
    "make test TEST_JOBS=0": "it runs this test suite (test_markers.py checks the tiers it runs)",
    "python docs/examples/engel_quantiles.py": (
        "it rewrites docs/img/engel_quantiles.png and a block of docs/quantiles.md (its pieces,"
        " monotone constraints with several levels and calibrated intervals, are tested by"
        " tests/test_monotone.py and tests/test_conformal.py)"
    ),
    "make test-fast": "it runs this test suite (the tests not marked slow)",
    "make figures": (
        "it rewrites the tracked results/SUMMARY.md, results/claims.csv and figures/; its first "
        "step is run here on an empty folder, the figures are tested by tests/test_figures.py"
    ),
    "make results": (
        "it recomputes every stored result (CPU-hours); each of its run.py lines is checked here"
    ),
    "python -m proxboost.versions --write-manifest --results results": (
        "rewrites the committed manifest (the first line of `make results`); tests/test_versions.py"
        " writes manifests of small results folders"
    ),
    "python -m proxboost.versions --write-manifest": (
        "the same, on the default folder results/; tests/test_versions.py"
    ),
    "python -m proxboost.versions": (
        "prints the reported version and the progress of the stored results; "
        "tests/test_versions.py checks both on small results folders"
    ),
    "python -m proxboost.versions --cost": (
        "reads every stored row (minutes); tests/test_retire.py runs it on small results folders"
    ),
    "python -m proxboost.versions --retire-sources": (
        "removes the committed old-version files once the recompute is complete;"
        " tests/test_retire.py runs it on small results folders"
    ),
    "python -m proxboost.claims --compare-versions 2 3": (
        "judges every claim twice on the whole store (minutes); tests/test_versions.py runs it on "
        "small results folders of both versions"
    ),
    "python -m proxboost.quantile_measurements --results results --write-docs": (
        "rewrites its tables in docs/quantiles.md from the stored rows (seconds);"
        " tests/test_quantile_measurements.py runs it on small results folders"
    ),
    "python -m proxboost.claims --compare-versions 2 3 --verdicts-only": (
        "the same, verdict changes only; tests/test_versions.py runs it on small results folders"
    ),
    "python benchmarks/bench_quantile_levels.py --protocol --write-docs": (
        "a timing benchmark of minutes on the six regression datasets that rewrites its table in "
        "docs/quantiles.md (judged only on an idle machine)"
    ),
    "python benchmarks/bench_quantile_levels.py --write-docs": (
        "a timing benchmark that rewrites its table in docs/quantiles.md (minutes of fits)"
    ),
    "python benchmarks/bench_step_auto_scale.py --write-docs --dataset bostonhousing --splits 5": (
        "a benchmark that rewrites its table in docs/estimators.md (minutes of fits)"
    ),
    "python run.py dataset=csv dataset.path=<file> dataset.target=<column>": (
        "the general form, with placeholders; docs/data.md's examples of it are run"
    ),
    "make results BUDGET=2h": (
        "`make results` in pieces of two hours; the deadline and the lines of a budget are tested "
        "by tests/test_budget.py"
    ),
    "make datasets": "it is `python -m proxboost.datasets --prefetch --docs`, run here",
    "python benchmarks/bench_weights.py --base <checkout of an earlier revision>": (
        "a benchmark of several minutes against another checkout (a placeholder)"
    ),
    "python benchmarks/tie_rules.py": "a benchmark of several minutes",
    "python benchmarks/protocol_cost.py --base <checkout> --write-docs": (
        "a pattern (<checkout>), generated: the line above, writing its table into engines.md"
    ),
    "python benchmarks/protocol_cost.py --base <checkout>": (
        "a pattern (<checkout>): minutes of fits in two checkouts, judged on an idle machine"
    ),
    "python benchmarks/bench_threads.py --rounds 3 --draws 4 --write-docs": (
        "a timing benchmark that rewrites its table in docs/engines.md (four draws of minutes of "
        "fits on both cores; judged only on an idle machine)"
    ),
    "python benchmarks/bench_threads.py --rounds 3 --draws 3 --write-docs": (
        "a timing benchmark that rewrites its table in docs/engines.md (three draws of minutes of "
        "fits on both cores; judged only on an idle machine)"
    ),
    "python benchmarks/profile_tree.py regression 3 --fit --n-samples 200000 --n-jobs 2": (
        "a profile of two-thread fits under Linux perf that compiles every kernel from an empty "
        "cache (minutes)"
    ),
    "python benchmarks/bench_threads.py --write-docs": (
        "a timing benchmark that rewrites its table in docs/engines.md (minutes of fits on both "
        "cores; judged only on an idle machine)"
    ),
    "python benchmarks/bench_threads.py --rounds 3": (
        "a timing benchmark run alternately under two settings of OpenMP's wait (minutes of fits "
        "on both cores; judged only on an idle machine)"
    ),
    "python benchmarks/bench_threads.py --kernels --rounds 5": (
        "a timing benchmark of the hist tree kernels on 10^6 rows, serial and on 2 threads "
        "(judged only on an idle machine)"
    ),
    "python benchmarks/bench_whole_fit.py --write-docs": (
        "a timing benchmark that rewrites its table in docs/engines.md (minutes of fits)"
    ),
    "python benchmarks/bench_whole_fit.py --draws 3 --write-docs": (
        "a timing benchmark that rewrites its table in docs/engines.md (three draws of minutes "
        "of fits; judged only on an idle machine)"
    ),
    "python benchmarks/profile_tree.py <dataset> <depth>": (
        "a pattern (<dataset>, <depth>): a profile under Linux perf that compiles every kernel "
        "from an empty cache (minutes)"
    ),
    "python benchmarks/benchmark_cost.py": (
        "a cost measurement of full benchmark jobs on real datasets, on an idle machine (minutes)"
    ),
    "python benchmarks/benchmark_cost.py --estimate <csv>": (
        "a pattern (<csv>): reads the measurements the line above writes; its arithmetic is "
        "checked by tests/test_benchmark.py"
    ),
    "python benchmarks/bench_tree.py crabs:3 spam:5 whitewine:5 redwine:5": (
        "a timing benchmark comparing two revisions, run alternately from their worktrees on an "
        "idle machine (minutes)"
    ),
    "python benchmarks/bench_node_sort.py": (
        "a timing benchmark of seconds, judged on an idle machine; it asserts that its two models"
        " find the same candidates on every node it times"
    ),
    "python benchmarks/bench_iteration.py": (
        "a timing benchmark (median of 5 fits of 1,000 iterations, on an idle machine); its "
        "setting is the compiled loop's, whose numbers tests/test_compiled_loop.py checks"
    ),
    "python benchmarks/profile_tree.py whitewine 1 --fit --levels 0.05,0.5,0.95": (
        "a profile under Linux perf that compiles every kernel from an empty cache (minutes)"
    ),
    "python benchmarks/profile_tree.py whitewine 1 --fit": (
        "a profile of whole fits under Linux perf that compiles every kernel from an empty cache "
        "(minutes)"
    ),
    "python benchmarks/bench_whole_fit.py --datasets whitewine,redwine,spam --depths 1": (
        "a timing benchmark comparing two revisions, run alternately from their worktrees on an "
        "idle machine (a minute each)"
    ),
    "python benchmarks/profile_tree.py spam 1 --fit": (
        "a profile of whole fits under Linux perf that compiles every kernel from an empty cache "
        "(minutes)"
    ),
    "python benchmarks/bench_threads.py --sizes 1000000 --engines exact --rounds 3": (
        "a timing benchmark comparing two revisions, run alternately from their worktrees on an "
        "idle machine (minutes on both cores)"
    ),
    "python benchmarks/profile_tree.py whitewine 5 --fit --annotate grow_nodes": (
        "a profile of whole fits under Linux perf that compiles every kernel from an empty cache "
        "(minutes), with the node loop's disassembly"
    ),
    "python benchmarks/profile_tree.py crabs 3 --fit": (
        "a profile of whole fits under Linux perf that compiles every kernel from an empty cache "
        "(minutes)"
    ),
    (
        "PYTHONPATH=. python /path/to/proxboost/run.py plugins=[my_plugins]"
        " hydra.searchpath=[file://my_conf] dataset=mcycle loss=lad algo=sklearn_gbr"
    ): (
        "it needs docs/extending.md's plugin module and config folder: tests/test_extending.py"
        " writes them from the page and runs this line"
    ),
    "python -m proxboost.sweep <folder>": "a pattern (<folder>), run here as `... sweep runs`",
    "python -m proxboost.results seal results": (
        "a one-time command whose effect is committed; tests/test_results_integrity.py tests it"
    ),
    "make bench": "a benchmark of several minutes",
    "make benchmark": (
        "it runs the quantile benchmark (CPU-hours); its run.py lines are checked here and its "
        "report by tests/test_benchmark_report.py"
    ),
    "make benchmark BUDGET=2h": (
        "the quantile benchmark in pieces (hours); the budget's Makefile lines are checked by "
        "tests/test_budget.py"
    ),
    "python -m proxboost.benchmark_report --results results --out results/quantile_benchmark.md"
    " --figure figures/quantile_benchmark_ranks.png --write-docs": (
        "what `make benchmark` runs after its sweep (checked by make -n); its main is run on fake "
        "rows by tests/test_benchmark_report.py"
    ),
    "python -m proxboost.benchmark_report --results results --out <page> --figure <png>": (
        "a pattern (<page>, <png>); tests/test_benchmark_report.py runs its main on fake rows"
    ),
    "make slurm-check": (
        "it needs root and installs slurm-wlm and munge (experiments/slurm_check.sh)"
    ),
    "bash experiments/results_slurm.sh hydra.launcher.partition=<your partition>": (
        "it needs a Slurm cluster and recomputes every stored result; a pattern (<your partition>);"
        " its lines are those of experiments/results.sh, checked here, and it runs with DRY_RUN=1"
        " in test_experiment_scripts_print_make_results"
    ),
    "python benchmarks/bench_engines.py --sections memory": "a benchmark of several minutes",
    "python benchmarks/bench_engines.py --sections synthetic": (
        "a timing benchmark of a minute, judged only on an idle machine"
    ),
    "python benchmarks/bench_engines.py --sections synthetic --rounds 3 --T 100": (
        "a timing benchmark of a minute, judged only on an idle machine"
    ),
    "python run.py -m hydra/launcher=slurm hydra.launcher.partition=<p> …": (
        "a pattern (…), not a command"
    ),
    **dict.fromkeys(
        (
            "python run.py dataset=csv dataset.path=houses.csv dataset.target=price loss=ls"
            " algo=prox",
            "python run.py dataset=csv dataset.path=data/churn.csv dataset.target=churned"
            " dataset.positive=yes 'dataset.drop=[customer_id]' loss=logistic algo=prox",
            "python run.py -m dataset=csv dataset.path=houses.csv dataset.target=price"
            " loss=ls,lad algo=gradient,prox",
        ),
        "examples of one's own CSV file (docs/data.md); tests/test_datasets_csv.py runs one end to"
        " end on a file it writes",
    ),
}


def readme_commands() -> list[str]:
    """Each line of the ``bash`` blocks of the README and the docs pages (continuations joined,
    comments dropped) and each inline code span that starts with ``python``, ``make``, ``pip`` or
    ``git``; once each, in order."""
    commands = []
    for text in (page.read_text() for page in PAGES):
        for block in re.findall(r"```bash\n(.*?)```", text, re.S):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split(" #")[0].strip()
                if line and not line.startswith("#"):
                    commands.append(" ".join(line.split()))
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        commands += [
            span
            for span in re.findall(r"`([^`\n]+)`", prose)
            if re.match(r"(python|make|pip|git) ", span)
        ]
    return list(dict.fromkeys(commands))


def _is_checked(command) -> bool:
    return command.startswith("python run.py ") and command not in RUN and command not in NOT_RUN


def _run_py_overrides(command) -> list[str]:
    """The overrides of a `python run.py` line, without ``-m``, ``--cfg job`` and placeholders
    (``<...>``)."""
    import shlex

    return [
        a
        for a in shlex.split(command)[2:]
        if a not in ("-m", "--multirun", "--cfg", "job", "--resolve")
        and "<" not in a
        and ">" not in a
    ]


@pytest.mark.slow
def test_every_readme_command_is_run_checked_or_listed():
    import shutil

    commands = readme_commands()
    assert len(commands) >= 20, commands
    unknown = [c for c in commands if c not in RUN and c not in NOT_RUN and not _is_checked(c)]
    assert not unknown, f"README commands neither run, checked nor listed in NOT_RUN: {unknown}"
    stale = [c for c in [*RUN, *NOT_RUN] if c not in commands]
    assert not stale, f"no longer in the README: {stale}"
    scripts = [c.split()[1] for c in commands if re.match(r"python \S+\.py", c)]
    assert all((REPO / s).is_file() for s in scripts), scripts
    if shutil.which("make"):
        for command in [c for c in commands if c.startswith("make ")]:
            dry = subprocess.run(
                ["make", "-n", *command.split()[1:]],
                cwd=REPO,
                capture_output=True,
                text=True,
                env=_outside_make(),
            )
            assert dry.returncode == 0, (command, dry.stderr)


@pytest.mark.slow
def test_readme_run_py_commands_compose():
    """The first job of every `python run.py` line composes (the slow test checks more jobs)."""
    from hydra import compose, initialize_config_dir

    commands = [c for c in readme_commands() if c.startswith("python run.py ") and c not in NOT_RUN]
    assert len(commands) >= 10
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        for command in commands:
            _compose_first_job(compose, command)


def _compose_first_job(compose, command):
    """Compose the first job of a `python run.py` line (inside ``initialize_config_dir``)."""
    overrides = []
    for a in _run_py_overrides(command):  # a sweep's first value
        key, _, value = a.partition("=")
        overrides.append(f"{key}={value if value.startswith('[') else value.split(',')[0]}")
    cfg = compose(
        config_name="config",
        overrides=overrides,
        return_hydra_config=any(o.startswith("hydra") for o in overrides),
    )
    assert cfg.loss.name and cfg.results_dir, command


def _covering_jobs(jobs):
    """Jobs of a sweep that hold every value of every swept key, every (dataset, loss) pair and
    every (loss, algo) pair of the sweep — what the checks depend on: a value's type, the data,
    the task, the method — greedily, in the sweep's order."""
    covered, chosen = set(), []
    for job in jobs:
        values = dict(o.split("=", 1) for o in job)
        features = {
            *values.items(),
            *[
                (a, b, values.get(a), values.get(b))
                for a, b in (("dataset", "loss"), ("loss", "algo"))
            ],
        }
        if features - covered:
            chosen.append(job)
            covered |= features
    return chosen


@pytest.mark.slow
def test_readme_run_py_commands_pass_the_sweep_checks(data_mirror, tmp_path, monkeypatch):
    """The jobs of every `python run.py` line (:func:`_covering_jobs` of its sweep) pass the checks
    a sweep makes before any fit (values, data files, tasks, results folder):
    :func:`proxboost.experiments.launch.cli.check_jobs`."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.types import RunMode

    from proxboost.experiments.launch.cli import _sweep_jobs, check_jobs
    from proxboost.experiments.launch.job_configs import JobConfigs

    monkeypatch.chdir(tmp_path)  # results_dir is relative to the folder run.py is started in
    seen = set()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        loader = GlobalHydra.instance().config_loader()
        configs = JobConfigs(loader, "config")  # the sweeps share their bases and options
        for command in [
            c for c in readme_commands() if c.startswith("python run.py ") and c not in NOT_RUN
        ]:
            config = loader.load_configuration(
                "config", _run_py_overrides(command), RunMode.MULTIRUN
            )
            jobs = _sweep_jobs(config)
            jobs = [
                job for job in _covering_jobs(jobs) if tuple(job) not in seen
            ]  # launchers share jobs
            seen.update(tuple(job) for job in jobs)
            problems, mismatched, *_ = check_jobs(config, jobs, configs=configs)
            assert not problems, (command, problems)
            assert not mismatched or config.skip_task_mismatch, (command, mismatched)
    assert not list(tmp_path.iterdir()), "the checks wrote something"


@pytest.mark.slow
def test_readme_commands_run(data_mirror, tmp_path):
    import shlex

    env = {
        **os.environ,
        "PROXBOOST_DATA_HOME": str(tmp_path / "data"),
        "PYTHONPATH": os.pathsep.join(
            [str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
    }
    (tmp_path / "results").mkdir()
    outputs = {}
    for command, extra in RUN.items():
        argv = shlex.split(command)
        argv = [sys.executable, *(str(REPO / a) if a == "run.py" else a for a in argv[1:]), *extra]
        done = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (command, done.stderr)
        outputs[command] = done.stdout + done.stderr
    rows = list((tmp_path / "runs").rglob("split-*.csv"))
    assert len(rows) == 4, rows  # two runs of two splits
    assert (tmp_path / "runs" / "report.md").is_file() and (
        tmp_path / "runs" / "report.png"
    ).is_file()
    assert (
        "[4 rows x"
        in outputs[
            "python -c \"from proxboost.experiments.store.results import load; print(load('runs'))\""  # noqa: E501
        ]
    )
    assert "engel" in outputs["python -m proxboost.datasets"]
    assert (tmp_path / "results" / "SUMMARY.md").is_file()


@pytest.mark.slow
def test_readme_numbers_of_the_workstation_sweep():
    """The README quotes only deterministic numbers: the sweep's jobs and grid sizes are the
    configuration's."""
    from hydra import compose, initialize_config_dir

    text = " ".join(TEXT.split())
    jobs, losses, methods = map(
        int, re.search(r"It runs (\d+) jobs \((\d+) losses × (\d+) methods\)", text).groups()
    )
    grid_g, grid_p, trees = map(
        int,
        re.search(
            r"(\d+) \(gradient\) or (\d+) \(proximal\) grid points of (\d+) trees", text
        ).groups(),
    )
    splits = int(re.search(r"fits, per loss, (\d+) splits", text).group(1))
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        cfg = compose(
            config_name="config",
            overrides=["+experiment=paper", "dataset=engel"],
            return_hydra_config=True,
        )
    params = cfg.hydra.sweeper.params
    assert (losses, methods) == (len(params.loss.split(",")), len(params.algo.split(",")))
    assert jobs == losses * methods
    depth_nu = len(cfg.grid.max_depth) * len(cfg.grid.learning_rate)
    assert (grid_g, grid_p) == (depth_nu, depth_nu * len(cfg.grid.step))
    assert (trees, splits) == (cfg.protocol.max_estimators, cfg.protocol.n_splits)


# -- the launch scripts of experiments/ ---------------------------------------------------------
#: Every script of experiments/ and how it is tested: its lines printed with DRY_RUN=1 here (and
#: their run.py lines checked as the pages' are), or not run, and why.
EXPERIMENT_SCRIPTS = {
    "results.sh": "its lines printed here: those of `make results`, each run.py line checked",
    "benchmark.sh": "its lines printed here: those of `make benchmark`, each composed",
    "results_slurm.sh": "its lines printed here: those of `make results`, -m lines on Slurm",
    "slurm_check.sh": "not run: it needs root and installs slurm-wlm and munge (make slurm-check)",
    "_run.sh": "not run alone: the run() that results.sh and benchmark.sh source, tested there",
}


def _script_lines(name, *args, **env) -> list[str]:
    done = subprocess.run(
        ["bash", str(REPO / "experiments" / name), *args],
        env={**os.environ, "PY": "python", "DRY_RUN": "1", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, (name, done.stderr)
    return done.stdout.splitlines()


def test_every_experiment_script_is_listed_and_parses():
    on_disk = sorted(p.name for p in (REPO / "experiments").iterdir())
    assert on_disk == sorted(EXPERIMENT_SCRIPTS), on_disk
    for name in on_disk:
        text = (REPO / "experiments" / name).read_text()
        assert text.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in text, name
        check = subprocess.run(["bash", "-n", str(REPO / "experiments" / name)])
        assert check.returncode == 0, name


@pytest.mark.slow
def test_experiment_scripts_print_make_results():
    """The scripts print (DRY_RUN=1) the run.py lines of `make results` and `make benchmark`, each
    a command of the pages (so checked above); the Slurm variant the same commands in the same
    order, its -m lines through the Slurm launcher."""
    results = _script_lines("results.sh")
    benchmark = _script_lines("benchmark.sh")
    from hydra import compose, initialize_config_dir

    assert all(line.startswith("python run.py ") for line in [*results, *benchmark])
    assert set(results) <= set(readme_commands())  # docs/results.md lists them: checked above
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        for line in benchmark:  # docs/quantile_benchmark.md shows them with dry_run=true
            _compose_first_job(compose, line)
    assert len(results) == 14 and results[0] == "python run.py +experiment=intro"
    manifest = "python -m proxboost.versions --write-manifest --results results"
    report = "python -m proxboost.report --results results"
    slurm = _script_lines("results_slurm.sh", "hydra.launcher.partition=p")
    launcher = " hydra/launcher=slurm hydra.launcher.partition=p"
    assert slurm == [
        manifest,
        *[line + launcher if " -m " in line else line for line in results],
        report,
    ]
    assert _script_lines("benchmark.sh", MULTIRUN_OVERRIDES="a=1 b=2") == [
        line + " a=1 b=2" for line in benchmark
    ]


def _outside_make():
    """The environment of a shell outside make: under `make test` (CI runs it) the inherited
    MAKELEVEL and MAKEFLAGS make a child make print "Entering directory" lines and flags."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}


def test_make_results_runs_the_script_between_manifest_and_summary():
    """`make -n results`: the manifest line, the script (run with DRY_RUN=1, printing its lines),
    the report, the budget summary last."""
    import shutil

    if not shutil.which("make"):
        pytest.skip("no make")
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "results", "PY=python", "STAMP="],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=_outside_make(),
    )
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines() == [
        "python -m proxboost.versions --write-manifest --results results",
        "PY=python DRY_RUN=1 bash experiments/results.sh",
        *_script_lines("results.sh"),
        "python -m proxboost.report --results results",
        "python -m proxboost.budget summary",
    ]
