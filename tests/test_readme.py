"""The README's examples run as written."""

import re
from pathlib import Path

TEXT = (Path(__file__).parents[1] / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)


def test_readme_example_runs():
    assert BLOCKS, "README.md has no python example"
    namespace = {}
    exec(compile(BLOCKS[0], "README.md", "exec"), namespace)
    assert namespace["reg"].train_loss_[-1] < namespace["reg"].train_loss_[0]
    assert set(namespace["clf"].predict(namespace["X"])) <= {"yes", "no"}


def test_readme_data_example_runs(data_mirror):
    (block,) = [b for b in BLOCKS if "load_dataset" in b]
    namespace = {}
    exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["X"].shape == (235, 1) and namespace["info"].origin in ("mirror", "cache")
