"""The README's example runs as written."""

import re
from pathlib import Path


def test_readme_example_runs():
    text = (Path(__file__).parents[1] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README.md has no python example"
    namespace = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    assert namespace["reg"].train_loss_[-1] < namespace["reg"].train_loss_[0]
    assert set(namespace["clf"].predict(namespace["X"])) <= {"yes", "no"}
