"""The shim over private names (proxboost.experiments.system.private_api): each accessor works with
the installed joblib, Hydra and tqdm (the interrupt tests in test_interrupts.py exercise the loky
ones)."""

import itertools
import threading

from hydra.core.override_parser.overrides_parser import OverridesParser
from joblib import parallel_config

from proxboost.experiments.system import private_api


def test_the_jobs_of_a_sweep_are_every_combination_of_its_values():
    parsed = OverridesParser.create().parse_overrides(["a=1,2", "b=x,y,z", "c=3"])
    jobs = private_api.sweep_jobs(parsed)
    expected = [
        [f"a={a}", f"b={b}", "c=3"] for a, b in itertools.product(("1", "2"), ("x", "y", "z"))
    ]
    assert sorted(map(sorted, jobs)) == sorted(map(sorted, expected))


def test_joblib_runs_tasks_in_threads_only_under_a_threading_backend():
    assert not private_api.joblib_uses_threads()
    with parallel_config(backend="threading"):
        assert private_api.joblib_uses_threads()
    with parallel_config(backend="loky"):
        assert not private_api.joblib_uses_threads()


def test_without_a_loky_pool_there_is_nothing_to_reach():
    executor = private_api.loky_executor()
    if executor is None:  # this process started no pool
        assert private_api.call_queue(None) is None and private_api.manager_thread(None) is None
    assert private_api.feeder_thread(object()) is None
    private_api.drop_queued_work(object())  # an executor without queued work: nothing to do


def test_tqdm_gets_a_thread_lock_unless_it_made_its_own():
    from tqdm import std

    saved = std.tqdm.__dict__.get("_lock")
    try:
        if "_lock" in std.tqdm.__dict__:
            del std.tqdm._lock
        private_api.use_a_thread_lock_for_tqdm()
        lock = std.tqdm.get_lock()
        assert isinstance(lock, type(threading.RLock()))  # no multiprocessing semaphore
        private_api.use_a_thread_lock_for_tqdm()  # made already: kept
        assert std.tqdm.get_lock() is lock
    finally:
        if saved is not None:
            std.tqdm._lock = saved


def test_hydras_repository_override_setter_and_override_dirname(compose):
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    repo = private_api.config_repository(GlobalHydra.instance().config_loader(), "config", [])
    assert repo.group_exists("loss") and not repo.group_exists("loss.tau")
    assert "tau" in repo.load_config("loss/pinball").config
    cfg = OmegaConf.create({"a": 1})
    OmegaConf.set_struct(cfg, True)
    parsed = OverridesParser.create().parse_overrides(["a=2", "+b=x"])
    private_api.apply_config_overrides(parsed, cfg)
    assert OmegaConf.to_container(cfg) == {"a": 2, "b": "x"}
    assert private_api.overrides_dirname(parsed, [], ",", "=") == "+b=x,a=2"
