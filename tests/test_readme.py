"""The README's examples run as written."""

import re
from pathlib import Path

import numpy as np

TEXT = (Path(__file__).parents[1] / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)


def test_readme_example_runs():
    assert BLOCKS, "README.md has no python example"
    namespace = {}
    exec(compile(BLOCKS[0], "README.md", "exec"), namespace)
    assert namespace["reg"].train_loss_[-1] < namespace["reg"].train_loss_[0]
    assert set(namespace["clf"].predict(namespace["X"])) <= {"yes", "no"}


def test_readme_estimator_examples_run(capsys):
    """The estimator sections' examples continue the first example (same namespace, in order)."""
    namespace = {}
    for block in [b for b in BLOCKS if "load_dataset" not in b]:
        exec(compile(block, "README.md", "exec"), namespace)
    np.testing.assert_allclose(namespace["proba"].sum(axis=1), 1.0)
    assert namespace["wreg"].eval_loss_.shape == (101,)
    es = namespace["es"]
    assert es.n_iter_ < 2000 and es.train_loss_.shape == (es.n_iter_ + 1,)
    assert set(np.argsort(es.feature_importances_)[-2:]) == {0, 1}
    assert "Train Loss" in capsys.readouterr().out
    assert namespace["authors"].tie_rule == "authors"


def test_readme_data_example_runs(data_mirror):
    (block,) = [b for b in BLOCKS if "load_dataset" in b]
    namespace = {}
    exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["X"].shape == (235, 1) and namespace["info"].origin in ("mirror", "cache")
