"""The compiled loops' row passes (``_row_passes.py``): the recorded loss equals the Python
loop's ``Loss.value``, bit for bit, also where the plain sum overflows and the sum is rescaled
(the rows' losses then computed again rather than kept for every sum)."""

import numpy as np
import pytest

from proxboost._compiled_loop import Spec, _rows
from proxboost._row_passes import LOSS_CODES, loss_value, loss_value_par
from proxboost.losses import make_loss


def _cases():
    rng = np.random.default_rng(0)
    n = 256
    for loss in ("ls", "lad", "pinball"):
        for scale in (1.0, 1e307):  # 1e307: the plain sum overflows (|y - f| up to ~1e308)
            y = rng.uniform(-1, 1, n) * scale
            f = rng.uniform(-1, 1, n) * scale / 4
            if loss == "ls" and scale > 1:
                y, f = y / 1e153, f / 1e153  # squares near 5e307: their sum overflows
            for w in (None, rng.integers(1, 4, n).astype(float)):
                yield loss, y, f, w


@pytest.mark.parametrize("passes", [loss_value, loss_value_par], ids=["serial", "parallel"])
def test_the_recorded_loss_is_the_python_losses_value_also_when_its_sum_overflows(passes):
    overflowing = 0
    for name, y, f, w in _cases():
        loss = make_loss(name, tau=0.3) if name == "pinball" else make_loss(name)
        expected = loss.value(y, f, w)
        values = loss.pointwise(y, f)
        with np.errstate(over="ignore"):
            overflowing += not np.isfinite(np.sum(values if w is None else w * values))
        rows = _rows(np.empty((0, 1)), y, w, f, f)
        spec = Spec(LOSS_CODES[name], 0.3, True, False, False, 1.0, 0.1, 0, 1e-4)
        got = passes(spec, rows)
        assert np.isfinite(expected) and got == expected, (name, w is None, got, expected)
    assert overflowing == 6  # every case at scale 1e307: the rescaled path
