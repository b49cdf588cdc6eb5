"""The paper's 34 statements judged on stored curves and rows: three-state verdicts,
``results/claims.csv``.

    python -m proxboost.claims [--results results] [--out results/claims.csv]

The criteria are those of ``docs/claims.md`` (the file's sha256 is written in every row's
``criteria_sha``); this package is their executable form and changes only with that file.

- :mod:`~proxboost.experiments.claims.criteria`: the named thresholds and the curve criteria: the
  numerical floor (:func:`floor_start`), the levels rule (:func:`levels_rule`), "mixed up"
  (:func:`mixed_up`), linear convergence (:func:`linear_fit`), identical curves
  (:func:`first_difference`, :class:`Same`), the readings of an open scope (:class:`Reading`), and
  the rules that combine cells and runs (:func:`combine_all`, :func:`aggregate_runs`,
  :func:`count_rule`).
- :mod:`~proxboost.experiments.claims.curveset`: the stored curves a synthetic judge reads, one run
  at a time.
- :mod:`~proxboost.experiments.claims.synthetic` and :mod:`~proxboost.experiments.claims.realworld`:
  one judge per statement (real-world judges use paired comparisons, Holm-adjusted p-values,
  equivalence margins and counting rules with missing cells; one protocol unit per verdict).
- :mod:`~proxboost.experiments.claims.statements`: the registry, one record per statement (text,
  paper line, experiment, losses, judge, aggregation, family, readings), read by the judging, the
  summary and the figures.
- :mod:`~proxboost.experiments.claims.judging`: :func:`judge` returns the rows of ``claims.csv``:
  ``id, scope, verdict, numbers, protocol, n_support, criteria_sha`` (one ``reading=…`` row per
  reading of a statement whose scope is open); nothing is fitted here.
"""

from proxboost.experiments.claims.criteria import (
    CLAIMS_COLUMNS,
    CONFIRMED,
    CONTRADICTED,
    EVERY_CELL,
    INCONCLUSIVE,
    Curve,
    Reading,
    Same,
    aggregate_runs,
    combine_all,
    count_rule,
    criteria_sha,
    faster_verdict,
    first_difference,
    floor_start,
    levels_rule,
    linear_fit,
    mixed_up,
    reading,
    scope,
)
from proxboost.experiments.claims.curveset import CurveSet, stated_curves, with_noise_column
from proxboost.experiments.claims.intro import intro_grid
from proxboost.experiments.claims.judging import judge, judge_real, judge_synthetic, write_claims
from proxboost.experiments.claims.statements import FAMILIES, STATEMENTS, Statement, families

__all__ = [
    "CLAIMS_COLUMNS",
    "CONFIRMED",
    "CONTRADICTED",
    "EVERY_CELL",
    "FAMILIES",
    "INCONCLUSIVE",
    "STATEMENTS",
    "Curve",
    "CurveSet",
    "Reading",
    "Same",
    "Statement",
    "aggregate_runs",
    "combine_all",
    "count_rule",
    "criteria_sha",
    "faster_verdict",
    "families",
    "first_difference",
    "floor_start",
    "intro_grid",
    "judge",
    "judge_real",
    "judge_synthetic",
    "levels_rule",
    "linear_fit",
    "mixed_up",
    "reading",
    "scope",
    "stated_curves",
    "with_noise_column",
    "write_claims",
]
