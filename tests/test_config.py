"""The configuration (``conf/``): its groups and options, what each option builds, and that the
grid options hold the boosting axes only (T_max is the protocol's, the forests' axes their
algo's)."""

from pathlib import Path

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from proxboost.engines import ENGINES
from proxboost.experiments.plan.methods import ALGOS, Algo, Engine
from proxboost.losses import make_loss

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_config_groups_and_values(compose):
    cfg = compose()
    assert (cfg.dataset.name, cfg.grid.name, cfg.engine.name) == ("synthetic", "default", "exact")
    assert cfg.tie_rule == "midpoint" and cfg.dry_run is False
    assert cfg.protocol.n_splits == 20 and cfg.protocol.seed == 0
    assert dict(cfg.protocol.fractions) == {"train": 0.5, "validation": 0.25, "test": 0.25}
    assert "mirror" in cfg.data
    paper = OmegaConf.to_container(compose(["grid=paper"]).grid)
    assert paper["max_depth"] == [1, 3, 5] and paper["learning_rate"] == [0.05, 0.1, 0.3, 0.5, 1.0]
    assert paper["step"] == [1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0]
    for f in (REPO / "conf" / "loss").glob("*.yaml"):  # each builds its loss (task: its own)
        # an option is named by its loss, or <loss>_<variant> for other parameter values
        # (pinball_low: τ = 0.1)
        lc = compose([f"loss={f.stem}"]).loss
        assert lc.name == f.stem.split("_")[0] and "task" not in lc
        assert type(instantiate(lc)) is type(make_loss(lc.name))
    assert instantiate(compose(["loss=pinball", "loss.tau=0.3"]).loss).tau == 0.3
    assert compose().results_dir == "runs"  # ad-hoc runs: untracked folder
    for f in (REPO / "conf" / "experiment").glob("*.yaml"):  # the committed reproduction
        assert compose([f"+experiment={f.stem}"]).results_dir == "results", f.stem
    assert compose(["loss=pinball"]).loss.tau == 0.9
    assert compose(["loss=exponential"]).loss.beta == 1.0
    assert sorted(f.stem for f in (REPO / "conf" / "algo").glob("*.yaml")) == sorted(ALGOS)
    assert sorted(f.stem for f in (REPO / "conf" / "engine").glob("*.yaml")) == sorted(ENGINES)
    slurm = compose(["hydra/launcher=slurm"], hydra_config=True).hydra.launcher
    assert slurm._target_.endswith("SlurmLauncher") and slurm.cpus_per_task >= 1
    joblib = compose(["hydra/launcher=joblib"], hydra_config=True).hydra.launcher
    assert joblib._target_.endswith("JoblibLauncher")


@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.grid
def test_each_algo_option_builds_its_algo_with_its_settings_and_nothing_of_hydras(compose, algo):
    node = compose([f"algo={algo}"]).algo
    built = instantiate(node, _convert_="all")
    assert isinstance(built, Algo) and built.name == algo
    written = OmegaConf.to_container(OmegaConf.load(REPO / "conf" / "algo" / f"{algo}.yaml"))
    settings = {k: v for k, v in written.items() if k not in ("_target_", "name", "grid")}
    assert built.options == settings and built.grid == written.get("grid", {})
    assert not any(k.startswith("_") for k in (*built.options, *built.grid))  # Hydra's keys


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.grid
def test_each_engine_option_builds_its_engine(compose, engine):
    assert instantiate(compose([f"engine={engine}"]).engine) == Engine(engine)


@pytest.mark.slow
def test_grid_options_hold_the_boosting_axes_and_t_max_is_the_protocols(compose):
    for f in sorted((REPO / "conf" / "grid").glob("*.yaml")):
        grid = OmegaConf.to_container(compose([f"grid={f.stem}"]).grid)
        # besides the boosting axes, a grid may hold a section per algo (its own axes)
        sections = {k for k, v in grid.items() if isinstance(v, dict)}
        assert sections <= set(ALGOS), f.stem
        assert set(grid) - sections == {"name", "max_depth", "learning_rate", "step"}, f.stem
        assert compose([f"grid={f.stem}"]).protocol.max_estimators == 1000, f.stem
    assert compose(["protocol.max_estimators=20"]).protocol.max_estimators == 20
    # the forests' own axis sits with their algo, with the values the grids held before
    forest = compose(["algo=random_forest"]).algo
    assert forest.n_estimators == 500
    assert OmegaConf.to_container(forest.grid) == {"max_features": [1 / 3, "sqrt", 1.0]}
