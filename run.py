"""Hydra entry point of the real-world protocol (docs/protocol.md): one run = (dataset, loss, algo).

    python run.py loss=hinge algo=residual_prox                  # embedded synthetic data
    python run.py dataset=engel loss=lad algo=prox grid=paper
    python run.py -m dataset=engel,sniffer loss=lad,pinball algo=gradient,prox
    python run.py -m ... hydra/launcher=joblib                   # sweep jobs on every core
    python run.py --cfg job                                      # the composed configuration

Everything is computed by :func:`proxboost.pipeline.run_experiment`; this file only turns the
configuration (``conf/``) into its plain arguments.
"""

import os

# One BLAS/OpenMP thread per process, set before numpy/scikit-learn/xgboost are imported: the
# pipeline parallelises across fits (processes), so threaded kernels would only oversubscribe
# the cores. Worker processes (loky, joblib launcher, submitit) inherit these variables. A
# value already set in the environment wins.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import logging  # noqa: E402
from pathlib import Path  # noqa: E402

import hydra  # noqa: E402
from hydra.core.hydra_config import HydraConfig  # noqa: E402
from hydra.types import RunMode  # noqa: E402
from hydra.utils import to_absolute_path  # noqa: E402
from omegaconf import DictConfig, OmegaConf  # noqa: E402

log = logging.getLogger("proxboost.run")
CONF = Path(__file__).resolve().parent / "conf"


def _label(cfg, group, keys):
    """The choice's name, plus the changed values when ``keys`` of the config group differ from
    its file (e.g. ``pinball-tau0.5``): rows of a modified choice never sit under its name."""
    name = cfg[group].name
    path = CONF / group / f"{name}.yaml"
    if not path.is_file():
        return name
    default = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    given = OmegaConf.to_container(cfg[group], resolve=True)
    changed = {k: given.get(k) for k in keys if k in given and given.get(k) != default.get(k)}
    if not changed:
        return name
    if group == "grid":
        from proxboost.results import identity_hash

        return f"{name}-custom{identity_hash(changed)[:6]}"
    return name + "".join(f"-{k}{v}" for k, v in sorted(changed.items()))


def _inner_n_jobs(cfg):
    """Workers for the fits of one run: ``n_jobs`` if set; else 1 per job when a parallel
    launcher (joblib) runs the sweep's jobs side by side, ``cpus_per_task`` under submitit, and
    every core otherwise (``None``)."""
    if cfg.n_jobs is not None:
        return int(cfg.n_jobs)
    hc = HydraConfig.get()
    if hc.mode != RunMode.MULTIRUN:
        return None
    target = str(hc.launcher.get("_target_", ""))
    if "joblib" in target:
        return 1
    if "submitit" in target:
        return int(hc.launcher.get("cpus_per_task") or 1)
    return None


@hydra.main(version_base=None, config_path="conf", config_name="config")
def main(cfg: DictConfig):
    from proxboost.datasets import ChecksumError, DatasetShapeError, DatasetUnavailableError
    from proxboost.pipeline import run_experiment
    from proxboost.protocol import ProtocolError

    config = OmegaConf.to_container(cfg, resolve=True)
    fr = cfg.protocol.fractions
    loss_keys = ("tau", "beta", "newton_steps")
    try:
        df = run_experiment(
            dataset=cfg.dataset.name,
            dataset_params=config["dataset"].get("params") or {},
            loss=cfg.loss.name,
            loss_params={k: v for k, v in config["loss"].items() if k in loss_keys},
            loss_label=_label(cfg, "loss", loss_keys),
            algo=cfg.algo.name,
            algo_options={k: v for k, v in config["algo"].items() if k != "name"},
            grid=config["grid"],
            grid_name=_label(cfg, "grid", ("max_depth", "learning_rate", "step", "max_features")),
            engine=cfg.engine.name,
            tie_rule=cfg.tie_rule,
            n_splits=cfg.protocol.n_splits,
            max_estimators=cfg.protocol.max_estimators,
            fractions=(fr.train, fr.validation, fr.test),
            seed=cfg.protocol.seed,
            results_dir=to_absolute_path(cfg.results_dir),
            mirror=cfg.data.mirror,
            n_jobs=_inner_n_jobs(cfg),
            progress=cfg.progress,
            skip_task_mismatch=cfg.skip_task_mismatch,
            skip_unavailable=cfg.skip_unavailable,
        )
    except (ProtocolError, DatasetUnavailableError, ChecksumError, DatasetShapeError) as exc:
        log.error("%s", exc)
        raise SystemExit(2) from None
    if df is None or df.empty:
        return None
    return float(df["test_loss"].mean())


if __name__ == "__main__":
    main()
