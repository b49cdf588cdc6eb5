"""Keys a run reads: no override is silently ignored.

Hydra accepts ``+key=value`` for any key, so ``python run.py +learning_rate=0.01`` would run the
default grid, ``+grid.learning_rat=[0.01]`` would run the default rates under a renamed grid and
``+optimizer=adam`` a full protocol, none of them saying that the key was never read. Before any
fit, :func:`unknown_keys` lists every key of a composed configuration that no run reads, with
the nearest key that one does: the command line then refuses it in one line (exit code 2).

The keys a run reads are those the configuration files under ``conf/`` define (each group's options
at the group's place, ``# @package _global_`` files at the top) and the grid axes of
:data:`proxboost.experiments.plan.protocol.GRID_AXES` (in ``grid``, in a grid's per-algorithm
sections and in an algorithm's ``grid``). The settings that their own code checks against its own
list, with its own one-line error, are open here: a dataset's ``params``, the loss's parameters, the
engine's settings, a baseline's ``options``, every key of a method registered by a plugin
(``register_method``: its constructor refuses an option it does not take).
"""

from __future__ import annotations

import difflib
import functools
from pathlib import Path

import yaml
from omegaconf import DictConfig, OmegaConf

from proxboost.experiments.plan.methods import ALGOS, known_algos
from proxboost.experiments.plan.protocol import GRID_AXES

__all__ = ["CONF_DIR", "unknown_keys"]

#: The repository's Hydra configuration (next to run.py).
CONF_DIR = Path(__file__).resolve().parents[4] / "conf"

#: Subtrees whose keys their own code checks (one line naming the allowed ones).
OPEN = ("dataset.params", "loss", "engine", "algo.options")

#: Top-level keys Hydra or the defaults list add to every composed configuration.
HYDRA_KEYS = ("hydra", "defaults")


def _paths(node, prefix=""):
    """Dotted paths of every key of a YAML mapping (inner keys included)."""
    if not isinstance(node, dict):
        return set()
    found = set()
    for key, value in node.items():
        path = f"{prefix}{key}"
        found.add(path)
        found |= _paths(value, path + ".")
    return found


def _file_paths(path: Path, group: str | None) -> set[str]:
    text = path.read_text(encoding="utf-8")
    node = yaml.safe_load(text) or {}
    node = {k: v for k, v in node.items() if k not in HYDRA_KEYS}
    glob = "@package _global_" in text.split("\n", 1)[0] or group is None
    return _paths(node, "" if glob else f"{group}.")


@functools.cache
def known_paths(conf_dir: Path = CONF_DIR) -> frozenset[str]:
    """Every key path a run reads (see the module's docstring)."""
    paths = set(_file_paths(conf_dir / "config.yaml", None))
    groups = [d for d in sorted(conf_dir.iterdir()) if d.is_dir() and d.name != "hydra"]
    algos = set()
    for group in groups:
        paths.add(group.name)
        for option in sorted(group.glob("*.yaml")):
            paths |= _file_paths(option, group.name)
            if group.name == "algo":
                algos.add(option.stem)
    for axis in GRID_AXES:
        paths |= {f"grid.{axis}", f"algo.grid.{axis}"}
        paths |= {f"grid.{algo}.{axis}" for algo in algos}
    paths |= {f"grid.{algo}" for algo in algos} | {"algo.grid"}
    return frozenset(paths)


def _leaves(cfg: DictConfig, prefix="", open_paths=OPEN):
    for key in cfg.keys():
        path = f"{prefix}{key}"
        if not prefix and key in HYDRA_KEYS:
            continue
        if any(path == p or path.startswith(p + ".") for p in open_paths):
            continue
        value = cfg._get_node(key)
        yield path
        if OmegaConf.is_dict(value):
            yield from _leaves(value, path + ".", open_paths)


def nearest(key: str, known) -> str | None:
    """The known key nearest to ``key``: the same last name elsewhere (``learning_rate`` ->
    ``grid.learning_rate``), else the closest spelling."""
    last = key.rsplit(".", 1)[-1]
    known = [p for p in known if not key.startswith(p + ".")]  # not the key's own parents
    same_name = sorted(p for p in known if p.rsplit(".", 1)[-1] == last)
    if same_name:
        return same_name[0]
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
    return close[0] if close else None


def unknown_keys(cfg: DictConfig, conf_dir: Path = CONF_DIR) -> list[tuple[str, str | None]]:
    """``(key, nearest known key or None)`` for every key of ``cfg`` that no run reads;
    nothing when ``conf_dir`` does not exist (an installed package without the repository)."""
    if not conf_dir.is_dir():
        return []
    known = known_paths(conf_dir)
    open_paths = OPEN
    name = OmegaConf.select(cfg, "algo.name")
    if name in known_algos() and name not in ALGOS:  # a user's method checks its own options
        open_paths = (*OPEN, "algo")
    unknown = []
    for path in _leaves(cfg, open_paths=open_paths):
        if path not in known and not any(path.startswith(u + ".") for u, _ in unknown):
            unknown.append((path, nearest(path, known)))
    return unknown


def message(unknown: list[tuple[str, str | None]]) -> str:
    """The one line that refuses them."""
    parts = [f"{key!r}" + (f" (did you mean {near}?)" if near else "") for key, near in unknown]
    return (
        f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(parts)}: no run reads "
        f"{'them' if len(unknown) > 1 else 'it'}; `python run.py --cfg job` lists the keys"
    )
