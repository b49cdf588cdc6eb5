"""What proxboost adds to Hydra, installed when :mod:`proxboost.experiments.launch.cli` is imported:
by ``run.py``, and by every joblib-launcher worker and Slurm job, which import it (unpickling
``run.py``'s task function) before Hydra writes anything of their job.

- the resolver ``${proxboost.run_id:}`` of ``conf/hydra/output/proxboost.yaml``: one output
  folder per command, even for two commands started in the same second;
- the handling of a full disk or a lost permission in Hydra's own writes
  (:func:`proxboost.experiments.system.io_errors.install`).
"""

from __future__ import annotations

import functools
import os
import secrets

from omegaconf import OmegaConf

from proxboost.experiments.system import io_errors

__all__ = ["install", "run_id"]


@functools.cache
def run_id() -> str:
    """This command's part of its output folder's name: its pid (unique on its host at that
    second) and a random part (two hosts sharing the folder). Hydra keeps the value the command
    resolved, so its jobs, workers and Slurm jobs use the same folder (their configs carry
    Hydra's resolver cache)."""
    return f"{os.getpid()}-{secrets.token_hex(2)}"


def install() -> None:
    if not OmegaConf.has_resolver("proxboost.run_id"):
        OmegaConf.register_new_resolver("proxboost.run_id", run_id, use_cache=True)
    io_errors.install()
