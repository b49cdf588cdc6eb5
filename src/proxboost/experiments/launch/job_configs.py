"""The configuration of every job of a sweep, equal to Hydra's, without one composition per job.

Hydra composes a job's configuration in about 0.1 s (it reads and merges some twenty files, its
own included), so the checks of a sweep before any fit
(:func:`proxboost.experiments.launch.cli.check_jobs`) took over a minute for 463 jobs. The jobs of a
sweep differ in the option of a few config groups (``dataset=engel loss=lad``) and in plain values
(``loss.tau=0.5``). :class:`JobConfigs` composes with Hydra once per distinct rest of the overrides
(the *base*, e.g. ``+experiment=paper``; a choice that cannot be swapped joins it) and once per
chosen option (its *probe*: the primary config with that one override), and builds a job from them:
the base, each chosen option's node taken from its probe, the values set by Hydra's own override
code, Hydra's record of the overrides rewritten.

A node is swapped only where that gives Hydra's result; any other job is composed by Hydra whole:

- the override is a plain ``group=option`` of a top-level group (no ``+``, ``~`` or ``@package``);
  no override of the job is a sweep or sets Hydra's own node (``hydra.*``: its record depends on
  them);
- the option, and the base's own choice for the group, are *plain*: the option's file has no
  defaults list, and its probe differs from the primary config alone (no override) only in the
  group's node and recorded choice (its content lands there only, nothing else depends on it);
- in the base no other file writes under the group's node (no other file at or below its
  package, no global-package file such as an experiment with a key of that name) and no file has
  an interpolated defaults entry (whose choice could depend on the option).
"""

from __future__ import annotations

import pickle

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.types import RunMode
from omegaconf import OmegaConf

from proxboost.experiments.system import private_api

__all__ = ["FEW_JOBS", "JobConfigs", "OneByOne", "for_sweep"]

#: Sweeps of at most this many jobs are composed job by job (:class:`OneByOne`): the compositions
#: :class:`JobConfigs` makes (the primary config, the base, a probe per option and per choice of
#: the base: 7 for a sweep of two algorithms, 10 for eight jobs) cost more than the jobs' own
#: below about 16 jobs (measured in one process at a load of 3, beside the test suite: 2 jobs
#: 1.6 s against 0.5 s, 8 jobs 2.3 s against 1.6 s, 32 jobs 5.2 s against 8.5 s).
FEW_JOBS = 12


def for_sweep(loader, config_name, searchpath, n_jobs):
    """What composes the ``n_jobs`` jobs of a sweep at the least cost."""
    kind = OneByOne if n_jobs <= FEW_JOBS else JobConfigs
    return kind(loader, config_name, searchpath)


class OneByOne:
    """Each job's configuration composed by Hydra (``loader.load_configuration``), the
    interface of :class:`JobConfigs`."""

    def __init__(self, loader, config_name, searchpath=()):
        self.loader, self.config_name, self.searchpath = loader, config_name, list(searchpath)

    def composes(self, loader, config_name, searchpath) -> bool:
        """Whether these are the configurations of ``config_name`` with ``searchpath`` by
        ``loader``."""
        return (loader, config_name, list(searchpath)) == (
            self.loader,
            self.config_name,
            self.searchpath,
        )

    def __call__(self, overrides):
        return self.loader.load_configuration(
            self.config_name, [*self.searchpath, *overrides], RunMode.RUN
        )


class JobConfigs(OneByOne):
    """The configurations of the jobs of one sweep: ``config_name`` composed with the command's
    ``searchpath`` overrides and then a job's, as ``loader.load_configuration`` composes it for a
    run. Made for one check of a sweep (the compositions it keeps are of this moment: working
    folder, environment, config files)."""

    def __init__(self, loader, config_name, searchpath=()):
        super().__init__(loader, config_name, searchpath)
        self._repo = private_api.config_repository(loader, config_name, self.searchpath)
        self._compositions = {}  # overrides → Hydra's config, None where it failed
        self._plain = {}  # (group, option) → whether the option is plain
        self._untouched = {}  # (base overrides, group) → whether only its option writes its node
        self._base_layers = {}  # base overrides → its files (path, package, keys) or None
        self._pickled = {}  # base overrides → its configuration, pickled (copied for each job)

    def __call__(self, overrides):
        """The configuration of the job of ``overrides`` (Hydra's error where it has one)."""
        try:
            cfg = self.assembled(list(overrides))
        except Exception:  # Hydra's own composition below reports it, as it would
            cfg = None
        return super().__call__(overrides) if cfg is None else cfg

    def assembled(self, overrides):
        """The job's configuration built from the base and probes, or None where that is not
        shown to be Hydra's (then Hydra composes it)."""
        parsed = OverridesParser.create().parse_overrides([*self.searchpath, *overrides])
        own = parsed[len(self.searchpath) :]
        if any(o.is_sweep_override() or o.is_hydra_override() for o in own):
            return None
        groups, values = [], []
        for o in own:
            (groups if self._is_group(o) else values).append(o)
        if len({o.key_or_group for o in groups}) < len(groups):
            return None
        base_key, swaps = self._base_and_swaps(groups)
        if base_key is None:
            return None
        cfg = self._copy(base_key)
        for o in swaps:  # assigning a node copies it: the probe is left as it is
            cfg[o.key_or_group] = self._composed((o.input_line,))[o.key_or_group]
            cfg.hydra.runtime.choices[o.key_or_group] = o.value()
        private_api.apply_config_overrides(values, cfg)
        _record(cfg, parsed)
        return cfg

    def _base_and_swaps(self, groups):
        """The group overrides that Hydra composes (the base's) and those whose node is swapped
        in; a choice that cannot be swapped joins the base (an experiment that sets values of the
        dataset: one base per dataset). (None, None) where the base fails to compose."""
        swaps = [o for o in groups if _is_choice(o)]
        fixed = [o for o in groups if not _is_choice(o)]
        for _ in range(2):  # the swaps are checked again against the larger base
            base_key = tuple(o.input_line for o in groups if o in fixed)
            if self._composed(base_key) is None:
                return None, None
            kept = [o for o in swaps if self._swappable(base_key, o)]
            if len(kept) == len(swaps):
                return base_key, swaps
            fixed += [o for o in swaps if o not in kept]
            swaps = kept
        return None, None

    def _copy(self, base_key):
        """A copy of the base's configuration, flags and all (OmegaConf's pickling: five times
        faster than ``copy.deepcopy`` of a whole configuration, Hydra's node included)."""
        if base_key not in self._pickled:
            self._pickled[base_key] = pickle.dumps(self._composed(base_key))
        return pickle.loads(self._pickled[base_key])

    def _composed(self, overrides: tuple):
        """Hydra's composition of ``overrides`` after the search path, once; None if it fails."""
        if overrides not in self._compositions:
            try:
                cfg = self.loader.load_configuration(
                    self.config_name, [*self.searchpath, *overrides], RunMode.RUN
                )
            except Exception:  # the jobs that need it are composed by Hydra, which reports it
                cfg = None
            self._compositions[overrides] = cfg
        return self._compositions[overrides]

    def _is_group(self, override) -> bool:
        """Whether Hydra takes ``override`` as a config group's choice (not a value), as its
        defaults list does."""
        return not isinstance(override.value(), dict) and self._repo.group_exists(
            override.key_or_group
        )

    def _swappable(self, base_key, override) -> bool:
        """Whether the job's node of the group is the probe's node of ``override``'s option."""
        group = override.key_or_group
        return self._is_plain(group, override.value()) and self._only_option_writes(base_key, group)

    def _is_plain(self, group, option) -> bool:
        """The option's file has no defaults list and its content lands in the group's node only:
        its probe is the primary config alone but for that node and the recorded choice."""
        key = (group, option)
        if key not in self._plain:
            reference, probe = self._composed(()), self._composed((f"{group}={option}",))
            loaded = self._repo.load_config(f"{group}/{option}")
            self._plain[key] = (
                reference is not None
                and probe is not None
                and group in probe
                and loaded is not None
                and not loaded.defaults_list
                and _outside(reference, group) == _outside(probe, group)
            )
        return self._plain[key]

    def _only_option_writes(self, base_key, group) -> bool:
        """In the base, the group's node is written by its chosen option alone (a plain one), and
        no file's defaults list is interpolated."""
        key = (base_key, group)
        if key not in self._untouched:
            self._untouched[key] = self._check_base(base_key, group)
        return self._untouched[key]

    def _check_base(self, base_key, group) -> bool:
        base = self._composed(base_key)
        choice = base.hydra.runtime.choices.get(group)
        if not isinstance(choice, str) or not self._is_plain(group, choice):
            return False
        layers = self._layers(base_key)
        if layers is None:
            return False
        owners = [path for path, package, _ in layers if _under(package, group)]
        # a global-package file (the primary config, an experiment) with a key of that name
        global_keys = [keys for _, package, keys in layers if not package]
        return owners == [f"{group}/{choice}"] and not any(group in keys for keys in global_keys)

    def _layers(self, base_key):
        """The files the base is merged from, in order: (path, package, top-level keys); None if
        one cannot be read or has an interpolated defaults entry."""
        if base_key not in self._base_layers:
            layers = []
            for layer in self.loader.compute_defaults_list(
                self.config_name, [*self.searchpath, *base_key], RunMode.RUN
            ).defaults:
                loaded = self._repo.load_config(layer.config_path)
                if loaded is None or any(map(_interpolated, loaded.defaults_list or ())):
                    layers = None
                    break
                layers.append((layer.config_path, layer.package, set(loaded.config)))
            self._base_layers[base_key] = layers
        return self._base_layers[base_key]


def _is_choice(override) -> bool:
    """A plain ``group=option`` of a top-level group (a candidate for a swap)."""
    group = override.key_or_group
    return (
        not (override.is_add() or override.is_force_add() or override.is_delete())
        and override.package is None
        and isinstance(override.value(), str)
        and "/" not in group
        and "." not in group
    )


def _interpolated(element) -> bool:
    """Whether an entry of a file's defaults list has an interpolation anywhere (its group, option,
    package: what it chooses may depend on other choices)."""
    return any("${" in str(value) for value in vars(element).values())


def _under(package, group) -> bool:
    """Whether a file placed at ``package`` writes inside the top-level node ``group``."""
    return package == group or (package or "").startswith(group + ".")


def _outside(cfg, group) -> dict:
    """``cfg`` (unresolved) without the group's node, its recorded choice and the record of the
    overrides: what a plain option leaves as the primary config has it."""
    tree = OmegaConf.to_container(cfg, resolve=False)
    tree.pop(group, None)
    hydra = tree.get("hydra") or {}
    hydra.pop("overrides", None)
    (hydra.get("job") or {}).pop("override_dirname", None)
    ((hydra.get("runtime") or {}).get("choices") or {}).pop(group, None)
    return tree


def _record(cfg, parsed) -> None:
    """Hydra's record of the job's overrides (``hydra.overrides``, ``hydra.job.override_dirname``)
    as its composition writes it, in the command's order."""
    task = [o for o in parsed if not o.is_hydra_override()]
    cfg.hydra.overrides.hydra = [o.input_line for o in parsed if o.is_hydra_override()]
    cfg.hydra.overrides.task = [o.input_line for o in task]
    names = cfg.hydra.job.config.override_dirname
    cfg.hydra.job.override_dirname = private_api.overrides_dirname(
        task, names.exclude_keys, names.item_sep, names.kv_sep
    )
