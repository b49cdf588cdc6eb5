"""The report of one's own sweep: exactly the stored datasets, losses and methods, deterministic."""

import math

import numpy as np
import pytest

from proxboost.experiments.report import sweep
from proxboost.experiments.store.results import write_row


def _store(folder, dataset, loss, algo, values, engine="exact", errors=None):
    for k, v in enumerate(values):
        write_row(
            folder,
            dict(
                protocol="smoke/3splits/T20",
                dataset=dataset,
                loss=loss,
                algo=algo,
                engine=engine,
                split=k,
                test_loss=v,
                test_error=math.nan if errors is None else errors[k],
                n_estimators=10 + k,
                tie_rule="midpoint" if engine != "none" else "none",
                identity={"run": [dataset, loss, algo]},
            ),
        )


@pytest.mark.slow
def test_report_holds_exactly_the_stored_runs(tmp_path):
    res = tmp_path / "runs"
    _store(res, "engel", "lad", "prox", [1.0, 2.0, 3.0])
    _store(res, "engel", "lad", "xgboost", [2.0, 2.0, 2.0], engine="none")
    _store(res, "spam", "hinge", "gradient", [0.5, 0.7], errors=[0.1, 0.3])
    table = sweep.summary_table(
        __import__("proxboost.experiments.store.results", fromlist=["load"]).load(res)
    )
    assert list(zip(table["dataset"], table["loss"], table["algo"])) == [
        ("engel", "lad", "prox"),
        ("engel", "lad", "xgboost"),
        ("spam", "hinge", "gradient"),
    ]
    assert list(table["rows"]) == [3, 3, 2]
    assert table.loc[0, "test_loss"] == "2 ± 1" and table.loc[0, "test_error"] == "—"
    assert table.loc[2, "test_error"] == f"0.2 ± {np.std([0.1, 0.3], ddof=1):.2g}"
    md, png = sweep.write_report(res, tmp_path / "out")
    text = md.read_text()
    assert "| smoke/3splits/T20 | spam | hinge | gradient | exact | midpoint | 2 |" in text
    assert "sniffer" not in text and "advertisements" not in text
    first = png.read_bytes()
    sweep.write_report(res, tmp_path / "out")
    assert png.read_bytes() == first and md.read_text() == text  # same rows, same files
    fig = sweep._figure(
        __import__("proxboost.experiments.store.results", fromlist=["load"]).load(res),
        tmp_path / "f.png",
    )
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["engel / lad", "spam / hinge"]
    assert [t.get_text() for t in visible[0].get_xticklabels()] == ["prox", "xgboost"]
