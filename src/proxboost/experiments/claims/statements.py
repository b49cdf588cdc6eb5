"""The registry of the paper's 34 statements, as data: one :class:`Statement` per statement, in the
order of ``docs/claims.md``.

Everything that lists, groups or judges statements reads this registry:
:func:`proxboost.experiments.claims.judge` (which judge, on which experiment, how its runs combine),
the summary (its table and the count per family) and the claims figure. A statement is added or
changed here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from proxboost.experiments.claims import realworld as rw
from proxboost.experiments.claims import synthetic as sy
from proxboost.experiments.claims.criteria import (
    EVERY_CELL,
    Reading,
    aggregate_runs,
    reading,
    seed_share_rule,
)
from proxboost.experiments.claims.intro import plateau_context
from proxboost.experiments.store.naming import PAPER_CLASSIFICATION_LOSSES, PAPER_REGRESSION_LOSSES

__all__ = ["FAMILIES", "REAL_WORLD", "STATEMENTS", "Statement", "families"]

#: experiment of the statements judged on stored real-world rows (the others name a curve
#: experiment)
REAL_WORLD = "real_world"


@dataclass(frozen=True)
class Statement:
    """One statement of the paper and how it is judged.

    ``losses`` is its scope: the losses it speaks about (a synthetic statement is judged on the runs
    whose tie rules cover them). ``judge`` maps a run (synthetic) or a protocol unit (real world) to
    judged cells; ``aggregation`` combines the verdicts of a synthetic statement's runs (None for a
    real-world statement, whose verdict rests on the protocol unit with the most judged cells).

    ``readings``: where the paper's sentence leaves its scope open, each reading of it as a filter
    of the judged cells (:class:`~proxboost.experiments.claims.criteria.Reading`), all judged and
    reported side by side; the first is the headline (the ``all`` row and the cell rows): the scope
    the criteria fixed before the rows they judge were computed (docs/claims.md, scopes). Empty when
    the sentence leaves no scope open.

    ``context``: for a synthetic statement, a function of the stored curves giving a sentence that
    ends the ``all`` row's numbers: what produces the behaviour the statement speaks of, from
    other stored experiments (not judged; None for none).
    """

    id: str
    text: str
    paper_line: str
    experiment: str
    losses: tuple[str, ...]
    judge: Callable
    aggregation: Callable | None
    family: str
    readings: tuple[Reading, ...] = ()
    context: Callable | None = None

    @property
    def headline(self) -> Reading:
        """The reading the ``all`` row and the cell rows use."""
        return self.readings[0] if self.readings else EVERY_CELL


_PS = sy.PROXIMAL_STEP_LOSSES
_CONV, _STEP, _REAL, _INTRO = "Convergence", "Proximal step", "Real world", "Introduction"

#: the family names, in the order the summary counts them
FAMILIES = (_CONV, _STEP, _REAL, _INTRO)


def _s(
    sid,
    text,
    line,
    experiment,
    losses,
    judge,
    family,
    aggregation=aggregate_runs,
    readings=(),
    context=None,
):
    if experiment == REAL_WORLD:
        aggregation = None
    return Statement(
        sid,
        text,
        line,
        experiment,
        tuple(losses),
        judge,
        aggregation,
        family,
        tuple(readings),
        context,
    )


_BEFORE = "the scope the criteria fixed before the rows they judge were computed"
_STEP_READINGS = (
    reading(
        "P, RP and AP",
        f"every proximal method of the figure, whose curves depend on λ (l. 854–856); {_BEFORE}",
        methods=("P", "RP", "AP"),
    ),
    reading(
        "P",
        "'proximal boosting' of the paragraph (l. 854, 869) read as Algorithm prox alone",
        methods=("P",),
    ),
)


_LE, _LH, _LP = ("ls", "exponential"), ("lad", "hinge"), ("lad", "pinball")

_REGISTRY = (
    _s(
        "1a",
        "ls: proximal and gradient boosting are exactly equivalent",
        "782",
        "convergence",
        ("ls",),
        sy.judge_ls_prox_equals_gradient,
        _CONV,
    ),
    _s(
        "1b",
        "ls, exponential: P and G behave exactly the same (curves mixed up)",
        "822",
        "convergence",
        _LE,
        sy.judge_prox_gradient_mixed_up_ls_exponential,
        _CONV,
    ),
    _s(
        "1c",
        "ls, exponential: linear convergence, steeper with deeper trees",
        "824",
        "convergence",
        _LE,
        sy.judge_linear_convergence_deeper_steeper_ls_exponential,
        _CONV,
        readings=(
            reading(
                "P and G",
                "both methods, whose curves the sentence before calls mixed up (l. 822); "
                + _BEFORE,
                methods=("P", "G"),
            ),
            reading(
                "P",
                "the sentence's subject: 'the rate of convergence of proximal boosting is linear'"
                " (the theorem it cites is about P)",
                methods=("P",),
            ),
        ),
    ),
    _s(
        "1d",
        "ls, exponential: the residual does not help convergence",
        "826",
        "convergence",
        _LE,
        sy.judge_residual_not_helping_ls_exponential,
        _CONV,
    ),
    _s(
        "1e",
        "pinball behaves like lad, logistic like exponential",
        "784–785",
        "convergence",
        ("pinball", "lad", "logistic", "exponential"),
        sy.judge_pinball_like_lad_logistic_like_exponential,
        _CONV,
    ),
    _s(
        "2a",
        "lad, hinge: P converges faster than G",
        "828",
        "convergence",
        _LH,
        sy.judge_prox_faster_than_gradient_lad_hinge,
        _CONV,
    ),
    _s(
        "2b",
        "hinge: G does not seem to converge",
        "828",
        "convergence",
        ("hinge",),
        sy.judge_gradient_not_converging_hinge,
        _CONV,
    ),
    _s(
        "2c",
        "lad, hinge: P's convergence almost linear",
        "829",
        "convergence",
        _LH,
        sy.judge_prox_almost_linear_lad_hinge,
        _CONV,
    ),
    _s(
        "2d",
        "lad, hinge: the residual helps G converge (RG faster than G)",
        "831",
        "convergence",
        _LH,
        sy.judge_residual_helps_gradient_lad_hinge,
        _CONV,
    ),
    _s(
        "2e",
        "lad, hinge: RP behaves like P (curves mixed up)",
        "832",
        "convergence",
        _LH,
        sy.judge_residual_prox_like_prox_lad_hinge,
        _CONV,
    ),
    _s(
        "5",
        "same behaviour vs iterations and vs seconds; a proximal step costs no more",
        "846–847",
        "convergence",
        ("ls", "exponential", "lad", "hinge"),
        sy.judge_same_vs_iterations_and_seconds,
        _CONV,
    ),
    _s(
        "3a",
        "bigger λ, faster decrease of the training loss",
        "868",
        "proximal_step",
        _PS,
        sy.judge_bigger_step_faster_train,
        _STEP,
        readings=_STEP_READINGS,
    ),
    _s(
        "3b",
        "bigger λ, faster decrease of the test loss",
        "868",
        "proximal_step",
        _PS,
        sy.judge_bigger_step_faster_test,
        _STEP,
        readings=_STEP_READINGS,
    ),
    _s(
        "3c",
        "large enough λ: P faster than G on the training loss",
        "869",
        "proximal_step",
        _PS,
        sy.judge_large_step_prox_faster_train,
        _STEP,
    ),
    _s(
        "3d",
        "test loss: P and RP below G and RG for λ in 0.1–10",
        "872",
        "proximal_step",
        _PS,
        sy.judge_prox_below_gradient_test_moderate_steps,
        _STEP,
    ),
    _s(
        "3e",
        "large λ: P similar to RP and faster than RG (training loss)",
        "870",
        "proximal_step",
        _PS,
        sy.judge_large_step_prox_like_rp_faster_than_rg,
        _STEP,
    ),
    _s(
        "4a",
        "acceleration speeds up the decrease of training and test losses",
        "880",
        "proximal_step",
        _PS,
        sy.judge_acceleration_speeds_up,
        _STEP,
    ),
    _s(
        "4b",
        "both accelerated variants diverge, on training and test",
        "881",
        "proximal_step",
        _PS,
        sy.judge_accelerated_diverge,
        _STEP,
    ),
    _s(
        "4c",
        "non-accelerated methods reach a lower test loss",
        "882",
        "proximal_step",
        _PS,
        sy.judge_plain_lower_test_than_accelerated,
        _STEP,
    ),
    _s(
        "4d",
        "AP definitely better than AG",
        "883",
        "proximal_step",
        _PS,
        sy.judge_ap_better_than_ag,
        _STEP,
        readings=(
            reading(
                "λ ≥ 0.1",
                f"{_BEFORE} (the sentence names no λ)",
                **{"lambda": (0.1, 1.0, 10.0, 100.0)},
            ),
            reading(
                "every λ",
                "the sentence names no λ and the figure shows λ = 0.01 to 100 (l. 854)",
                **{"lambda": (0.01, 0.1, 1.0, 10.0, 100.0)},
            ),
        ),
    ),
    _s(
        "4e",
        "training divergence occurs after the minimal test loss",
        "889",
        "proximal_step",
        _PS,
        sy.judge_divergence_after_test_minimum,
        _STEP,
    ),
    _s(
        "6a",
        "ls: P = G, comparable to XGBoost, better than random forests",
        "936–937",
        REAL_WORLD,
        ("ls",),
        rw.judge_ls_prox_equals_gradient_vs_baselines,
        _REAL,
    ),
    _s(
        "6b",
        "ls: residual boosting most accurate on 3 of the 6 datasets",
        "938",
        REAL_WORLD,
        ("ls",),
        rw.judge_ls_residual_most_accurate,
        _REAL,
    ),
    _s(
        "6c",
        "lad, pinball: P always better than G",
        "941",
        REAL_WORLD,
        _LP,
        rw.judge_prox_beats_gradient_lad_pinball,
        _REAL,
    ),
    _s(
        "6d",
        "lad, pinball: P or RP most accurate in most situations",
        "942",
        REAL_WORLD,
        _LP,
        rw.judge_prox_or_rp_most_accurate_lad_pinball,
        _REAL,
    ),
    _s(
        "6e",
        "lad, pinball: AP better than AG, except on Engel",
        "946",
        REAL_WORLD,
        _LP,
        rw.judge_ap_beats_ag_except_engel,
        _REAL,
    ),
    _s(
        "6j",
        "regression: accelerated variants not more accurate than plain ones",
        "945",
        REAL_WORLD,
        PAPER_REGRESSION_LOSSES,
        rw.judge_accelerated_not_more_accurate_regression,
        _REAL,
    ),
    _s(
        "6f",
        "classification: P, RP, RG and XGBoost share the podium",
        "984",
        REAL_WORLD,
        PAPER_CLASSIFICATION_LOSSES,
        rw.judge_classification_podium,
        _REAL,
    ),
    _s(
        "6g",
        "hinge: P or RP always better than G and RG (loss and error)",
        "985",
        REAL_WORLD,
        ("hinge",),
        rw.judge_prox_beats_gradient_hinge,
        _REAL,
    ),
    _s(
        "6h",
        "classification: AP always better than G and AG (loss and accuracy)",
        "986",
        REAL_WORLD,
        PAPER_CLASSIFICATION_LOSSES,
        rw.judge_ap_beats_g_and_ag_classification,
        _REAL,
        readings=(
            reading(
                "exponential and hinge",
                f"the two classification losses of the section (l. 960); {_BEFORE}",
                loss=PAPER_CLASSIFICATION_LOSSES,
            ),
            reading(
                "hinge",
                "the sentence follows 'For the hinge loss, …' (l. 985), and the next one says both"
                " observations confirm the interest of proximal boosting for non-differentiable"
                " losses (l. 987)",
                loss=("hinge",),
            ),
        ),
    ),
    _s(
        "6i",
        "hinge instead of exponential rarely a big advantage in error",
        "990",
        REAL_WORLD,
        ("hinge", "exponential"),
        rw.judge_hinge_rarely_big_advantage,
        _REAL,
    ),
    _s(
        "7a",
        "introduction: G's training loss attains a plateau",
        "307",
        "intro",
        ("lad",),
        sy.judge_intro_gradient_plateaus,
        _INTRO,
        context=plateau_context,
    ),
    _s(
        "7b",
        "introduction: P constantly improves the objective",
        "308",
        "intro",
        ("lad",),
        sy.judge_intro_prox_keeps_improving,
        _INTRO,
    ),
    # 7c speaks of a single comparison per seed, so its runs are counted as seeds
    _s(
        "7c",
        "introduction: P achieves a lower test loss",
        "310",
        "intro",
        ("lad",),
        sy.judge_intro_prox_lower_test,
        _INTRO,
        aggregation=seed_share_rule,
    ),
)

#: id -> :class:`Statement`, in the order of docs/claims.md
STATEMENTS = {s.id: s for s in _REGISTRY}


def families() -> list[tuple[str, tuple[str, ...]]]:
    """(family, its statement ids) in the order of :data:`FAMILIES`, ids in registry order."""
    return [(f, tuple(s.id for s in _REGISTRY if s.family == f)) for f in FAMILIES]
