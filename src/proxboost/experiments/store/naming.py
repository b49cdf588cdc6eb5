"""Names shared by the analysis, the claims, the report and the figures: methods, losses, datasets,
λ grids, styles, and the protocols' folder names (the pipeline stores rows under them, the store
finds them there).

Plain constants and pure functions only (no state is changed on import). A method's short name
and colour are the same in every table and figure; the paper draws its proposed methods in blue,
orange and green, residual gradient boosting in red and XGBoost in pink.
"""

from __future__ import annotations

from proxboost import _vocabulary

#: Grids of the quantile benchmark's two budget readings (docs/quantile_benchmark.md): their
#: protocols answer a practitioner's question, not the paper's statements, so the claims and
#: the report's protocol tables leave them to the benchmark's own report.
BENCHMARK_GRIDS = ("benchmark15", "benchmark90")

#: The six boosting algorithms of the paper, in the order of its figures.
BOOSTING_METHODS = (
    "gradient",
    "prox",
    "residual_gradient",
    "residual_prox",
    "accelerated_gradient",
    "accelerated_prox",
)
#: The paper's baselines.
PAPER_BASELINES = ("xgboost", "random_forest")
#: The paper's eight methods (statements about "the methods" count these only).
PAPER_METHODS = BOOSTING_METHODS + PAPER_BASELINES
#: Baselines of this repository beyond the paper, drawn next to XGBoost when their rows exist.
EXTRA_BASELINES = ("lightgbm", "sklearn_hgb")
#: Every method a table or figure can show, in display order.
METHOD_ORDER = BOOSTING_METHODS + (
    "xgboost",
    "lightgbm",
    "sklearn_hgb",
    "catboost",
    "random_forest",
    "quantile_forest",
)
#: Methods whose paired differences Δ are taken against it.
REFERENCE = "gradient"

#: name -> (short name, colour, marker, label)
METHOD_STYLES = {
    "gradient": {"short": "G", "color": "#222222", "marker": "o", "label": "gradient (G)"},
    "prox": {"short": "P", "color": "#1f77b4", "marker": "s", "label": "prox (P)"},
    "residual_prox": {
        "short": "RP",
        "color": "#ff7f0e",
        "marker": "^",
        "label": "residual prox (RP)",
    },
    "accelerated_prox": {
        "short": "AP",
        "color": "#2ca02c",
        "marker": "D",
        "label": "accelerated prox (AP)",
    },
    "residual_gradient": {
        "short": "RG",
        "color": "#d62728",
        "marker": "v",
        "label": "residual gradient (RG)",
    },
    "accelerated_gradient": {
        "short": "AG",
        "color": "#9467bd",
        "marker": "P",
        "label": "accelerated gradient (AG)",
    },
    "xgboost": {"short": "XGB", "color": "#e377c2", "marker": "X", "label": "XGBoost (XGB)"},
    "lightgbm": {"short": "LGBM", "color": "#17becf", "marker": "h", "label": "LightGBM (LGBM)"},
    "sklearn_hgb": {
        "short": "HGB",
        "color": "#bcbd22",
        "marker": "p",
        "label": "scikit-learn HistGB (HGB)",
    },
    "random_forest": {
        "short": "RF",
        "color": "#8c564b",
        "marker": "*",
        "label": "random forest (RF)",
    },
    "quantile_forest": {
        "short": "QRF",
        "color": "#637939",
        "marker": "<",
        "label": "quantile regression forest (QRF)",
    },
    "catboost": {"short": "CB", "color": "#ffbb78", "marker": ">", "label": "CatBoost (CB)"},
}

#: Methods that report only the least-squares loss and the misclassification rate (as in the paper).
LS_AND_ERROR_ONLY = ("random_forest",)
#: Methods whose classifier does not depend on the classification loss (random forests; LightGBM and
#: HistGradientBoosting with their own logistic objective): fitted once per dataset and split (under
#: ``exponential``), reported for the misclassification rate only, and shown under every
#: classification loss, paired with that loss's boosting rows of the same split.
LOSS_INDEPENDENT = ("random_forest", "lightgbm", "sklearn_hgb")

#: The losses of the paper's real-world experiments, per task (the estimators have more:
#: ``logistic`` is a classification loss the paper does not run on real data).
PAPER_REGRESSION_LOSSES = ("ls", "lad", "pinball")
PAPER_CLASSIFICATION_LOSSES = ("exponential", "hinge")
#: Losses whose leaf line search can have ties (piecewise-linear objectives): the tie rule matters.
TIE_LOSSES = ("lad", "pinball", "hinge")
LOSS_NAMES = {
    "ls": "least squares (ls)",
    "lad": "least absolute deviation (lad)",
    "pinball": "pinball τ=0.9",
    "exponential": "exponential β=1",
    "logistic": "logistic",
    "hinge": "hinge",
}

#: The tie rule of a stored curve or row that names none (docs/method.md, tie rules).
DEFAULT_TIE_RULE = _vocabulary.DEFAULT_TIE_RULE

#: Tree engines in order of preference when stored results offer several (docs/engines.md):
#: the exact engines first (the compiled one, then scikit-learn's tree), then histograms.
ENGINE_PREFERENCE = ("exact", "sklearn", "hist")

#: The paper's real datasets, in the order of its figures.
REGRESSION_DATASETS = ("whitewine", "redwine", "bostonhousing", "crabs", "engel", "sniffer")
CLASSIFICATION_DATASETS = ("adult", "advertisements", "spam")

#: λ (per sample) of the proximal-step experiment.
STEP_GRID = (1e-2, 1e-1, 1.0, 10.0, 100.0)
#: Tree depths of the convergence experiment.
CONVERGENCE_DEPTHS = (3, 15)


def style(method) -> dict:
    """Style of ``method`` (grey dots with its own name when unknown)."""
    return METHOD_STYLES.get(
        method, {"short": str(method), "color": "grey", "marker": ".", "label": str(method)}
    )


def short(method) -> str:
    return style(method)["short"]


def tie_rule_of(value) -> str:
    """The tie rule a stored value names: :data:`DEFAULT_TIE_RULE` when empty or missing."""
    if (
        value is None
        or (isinstance(value, float) and value != value)
        or str(value) in ("", "nan", "None")
    ):
        return DEFAULT_TIE_RULE
    return str(value)


#: The grid axes that sit with an algorithm's option (``conf/algo/<name>.yaml``'s ``grid``), not in
#: the grid's own node: the forests' and the libraries' leaf axes. The protocol checks their values
#: (``proxboost.experiments.plan.protocol.GRID_AXES``, the same names).
ALGO_GRID_AXES = ("max_features", "min_samples_leaf", "min_data_in_leaf", "min_child_weight")


# -- protocol folders ---------------------------------------------------------------------------
#: The protocol's default train / validation / test fractions.
DEFAULT_FRACTIONS = (0.5, 0.25, 0.25)
#: How the interval measurement of a model of several levels orders equal conformity scores
#: (:data:`proxboost.conformal.TIES`): closed intervals unless a protocol asks for random ties.
DEFAULT_INTERVAL_TIES = "closed"


def protocol_name(
    grid_name,
    n_splits,
    max_estimators,
    fractions=DEFAULT_FRACTIONS,
    seed=0,
    interval_ties=DEFAULT_INTERVAL_TIES,
):
    """Name of a protocol (its rows' folders under the results directory):
    ``<grid>/<n>splits/T<T_max>``, plus ``/frac<a>-<b>-<c>``, ``/seed<s>`` and ``/ties-<rule>``
    when these differ from the defaults (0.5/0.25/0.25, seed 0, closed intervals). Example:
    ``paper/20splits/T1000``."""
    name = f"{grid_name}/{int(n_splits)}splits/T{int(max_estimators)}"
    fr = tuple(float(f) for f in fractions)
    if any(abs(a - b) > 1e-12 for a, b in zip(fr, DEFAULT_FRACTIONS)):
        name += "/frac" + "-".join(f"{f:g}" for f in fr)
    if int(seed) != 0:
        name += f"/seed{int(seed)}"
    if interval_ties != DEFAULT_INTERVAL_TIES:
        name += f"/ties-{interval_ties}"
    return name
