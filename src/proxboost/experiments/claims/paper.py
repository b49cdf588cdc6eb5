"""Where the paper says what this repository checks: its sections, its figures and, per statement,
the sentence it is judged on, quoted.

The registry (:mod:`proxboost.experiments.claims.statements`) keeps each statement's line in the
paper's LaTeX source, which a reader of the published paper cannot use; the report shows the
section and the quoted sentence instead (:func:`where`, :data:`QUOTES`) and turns any other
"(l. 868)" of a text it shows into its section (:func:`sections_for_lines`). Figure numbers and
section numbers are those of the published paper (Neurocomputing, 2023; arXiv:1808.09670).
"""

from __future__ import annotations

import re

__all__ = [
    "FIGURES",
    "QUOTES",
    "SECTIONS",
    "figure_of",
    "section_of",
    "sections_for_lines",
    "where",
]

#: (first line in the LaTeX source, number, title) of each section up to the conclusion, in order.
SECTIONS = (
    (211, "1", "Introduction"),
    (263, "2", "Problem and notation"),
    (312, "3", "Algorithms"),
    (351, "3.1", "The proximal gradient method"),
    (407, "3.2", "Gradient boosting"),
    (440, "3.3", "Boosting with non-differentiable loss functions"),
    (537, "4", "Convergence results"),
    (689, "5", "Numerical analysis"),
    (744, "5.1", "Behavior of proximal boosting"),
    (805, "5.1.1", "Convergence"),
    (852, "5.1.2", "Proximal step"),
    (893, "5.2", "Generalization in real world cases"),
    (932, "5.2.1", "Regression problems"),
    (959, "5.2.2", "Classification problems"),
    (993, "6", "Conclusion"),
)

#: The figures of ``figures/`` that redraw a figure of the paper: id -> (paper figure, what it
#: shows, the section it is in). Any other figure is this repository's own.
FIGURES = {
    "intro": ("Figure 1", "subgradient against proximal boosting on a toy problem", "2"),
    "convergence": ("Figure 2", "training losses against iterations, depths 3 and 15", "5.1.1"),
    "convergence_time": ("Figure 3", "training losses against clock time", "5.1.1"),
    "proximal_step": ("Figure 4", "training and test losses for several proximal steps λ", "5.1.2"),
    "regression_loss": ("Figure 5", "test losses on the regression datasets", "5.2.1"),
    "classification_loss": ("Figure 6", "test losses on the classification datasets", "5.2.2"),
    "classification_error": (
        "Figure 7",
        "misclassification rates on the classification datasets",
        "5.2.2",
    ),
}

#: Statement id -> the paper's sentence it judges, quoted (mathematics written out; "…" marks a
#: cut, "Figure n" the paper's own numbering).
QUOTES = {
    "1a": "In other words, proximal and gradient boosting are exactly equivalent.",
    "1b": "Let us analyze the top panels of Figure 2: for differentiable losses (least squares and"
    " exponential), proximal and gradient descents behave exactly the same (curves with symbols P"
    " and G are mixed up).",
    "1c": "Moreover, as theoretically analyzed in Theorem …, the rate of convergence of proximal"
    " boosting is linear with a slope that increases with the capacity of the class of weak"
    " learners (even though the exponential loss is not strongly convex).",
    "1d": "Still for differentiable losses, the use of the residual originally introduced to derive"
    " a convergence rate under weak assumptions … does not seem to help convergence neither with a"
    " large class of weak learners (in red, the residual is in fact always almost null), nor with a"
    " restricted class (in blue).",
    "1e": "In addition, note that we also considered other kind of losses such as the pinball loss"
    " for regression and the logistic loss for classification … Nevertheless, since the numerical"
    " behaviors are respectively very close to the least absolute deviations and the exponential"
    " cases, the results are not reported.",
    "2a": "Concerning non-differentiable losses (least absolute deviations and hinge on the bottom"
    " panels of Figure 2), proximal boosting converges faster than gradient boosting, which does"
    " not seem to converge for the hinge loss.",
    "2b": "Concerning non-differentiable losses (least absolute deviations and hinge on the bottom"
    " panels of Figure 2), proximal boosting converges faster than gradient boosting, which does"
    " not seem to converge for the hinge loss.",
    "2c": "In addition, it is noticeable to observe that convergence of proximal boosting seems"
    " almost linear while the empirical risk violates the assumptions of smoothness required for"
    " Theorem ….",
    "2d": "For non-differentiable losses, the use of the residual helps gradient boosting to"
    " converge.",
    "2e": "Yet, we remark that residual proximal boosting behaves similarly to proximal boosting"
    " (curves with symbols RP and P are mixed up), suggesting that, from a convergence point of"
    " view, this mechanism is more needed for a theoretical purpose than for a practical one.",
    "5": "We can remark that the behavior of algorithms is similar when convergence is analyzed"
    " with respect to the number of iterations or to the time elapsed. This shows that computing a"
    " proximal direction of descent is not more expensive than computing a (sub)gradient, which is"
    " in favor of proximal boosting.",
    "3a": "Figure 4 shines a light of the tie between the proximal step and the convergence rate:"
    " the bigger λ, the faster the convergence of the training and test losses.",
    "3b": "Figure 4 shines a light of the tie between the proximal step and the convergence rate:"
    " the bigger λ, the faster the convergence of the training and test losses.",
    "3c": "As a consequence (see the top panel), proximal boosting prevails over gradient boosting"
    " from an optimization perspective because it converges faster for sufficiently large λ.",
    "3d": "Analyzing the test loss, proximal and residual proximal boosting achieve lower errors"
    " than gradient and residual gradient boosting for intermediate values of λ (between 0.1 and"
    " 10).",
    "3e": "Regarding the training loss, the advantage of using the residual is not clear since"
    " proximal boosting offers similar convergence rates than residual proximal boosting for large"
    " values of λ, and converges faster than residual gradient boosting.",
    "4a": "For proximal as well as gradient boosting, acceleration speeds up the decrease of the"
    " training and test losses, and thus it makes it possible to build boosted models with very"
    " few weak learners.",
    "4b": "Nevertheless, both accelerated boosting approaches suffer from instabilities leading to"
    " divergence, on the training and on the test sets.",
    "4c": "Regarding the test error, they do not seem to be capable to produce very accurate models"
    " (on the bottom panel of Figure 4, non-accelerated methods offer a lower test error than"
    " accelerated ones).",
    "4d": "Remark that, accelerated proximal boosting performs definitely better than its"
    " accelerated gradient counterpart.",
    "4e": "Even though divergence on the training error seems to always occur in the overfitting"
    " regime (i.e. after the minimal test error, see Figure 4), these observations are not in line"
    " with a statistically reliable learning technique.",
    "6a": "Regarding the least squares setting, let us remind that gradient and proximal boosting"
    " boil down to be the same method (the directions of descent are exactly the same). We observe"
    " that they achieve a performance comparable to extreme gradient boosting and better than"
    " random forests.",
    "6b": "Moreover, even though residual boosting was not designed for differentiable losses, it"
    " provides the most accurate models for 3 datasets out of 6.",
    "6c": "Looking now at least absolute deviations and pinball losses, we observe that proximal"
    " boosting always achieves better predictions than gradient boosting.",
    "6d": "In addition, in the bulk of the situations, the most accurate method is either proximal"
    " or residual proximal boosting.",
    "6e": "Incidentally, we remark that accelerated proximal boosting offers better generalization"
    " performances than accelerated gradient boosting for non-differentiable losses (except for"
    " the dataset Engel).",
    "6j": "Regarding accelerated versions of boosting, as expected they do not produce more"
    " accurate models than vanilla boosting, very likely because convergence is so fast that"
    " tuning parameters becomes excessively tricky.",
    "6f": "Regarding both indicators (loss in Figure 6 and error in Figure 7), four methods share"
    " the winners' podium: proximal boosting (blue), residual proximal boosting (orange), residual"
    " gradient boosting (red) and XGBoost (pink).",
    "6g": "For the hinge loss, proximal or residual proximal boosting are always better than"
    " gradient and residual gradient boosting.",
    "6h": "Moreover, accelerated proximal boosting (purple) always gives better loss and accuracy"
    " than gradient and accelerated gradient boosting (brown).",
    "6i": "Nevertheless, the bottom panel of Figure 7 shows that, overall using a hinge loss"
    " instead of an exponential loss is rarely a big advantage, except to obtain sporadically a"
    " marginal gain in accuracy.",
    "7a": "From an optimization perspective, it appears clearly that the subgradient method fails"
    " to minimize the empirical risk (prediction is far from the data and the training error"
    " attains a plateau at 1.2·10⁻¹) … The subgradient method faces a flaw in convergence, in all"
    " likelihood due to non-differentiability of the absolute function |·|.",
    "7b": "… while the proximal-based procedure constantly improves the objective. This simple"
    " example illustrates, inside the boosting paradigm, a well-known fact in numerical"
    " optimization: proximal-based algorithms prevail over subgradient techniques for"
    " non-differentiable objective functions.",
    "7c": "Beyond optimization, proximal boosting also outperforms gradient boosting from a"
    " statistical perspective since it achieves a lower test error (red curve in the right side of"
    " Figure 1).",
}

_TITLES = {number: title for _, number, title in SECTIONS}
_LINE_REF = re.compile(r"\bl\. ?(\d+(?:\s*[–-]\s*\d+)?(?:,\s*\d+(?:\s*[–-]\s*\d+)?)*)")


def section_of(line) -> str:
    """The number of the section holding ``line`` of the LaTeX source ("5.1.2")."""
    first = int(re.match(r"\d+", str(line)).group())
    number = SECTIONS[0][1]
    for start, n, _ in SECTIONS:
        if start <= first:
            number = n
    return number


def where(line) -> str:
    """ "Section 5.1.2, Proximal step" for a registry's ``paper_line`` ("868", "936–937")."""
    number = section_of(line)
    return f"Section {number}, {_TITLES[number]}"


def sections_for_lines(text: str) -> str:
    """``text`` with each "l. 868" (or "l. 854–856", "l. 854, 869") replaced by its sections
    ("Section 5.1.2"): a line number of the LaTeX source means nothing to a reader of the paper."""

    def replace(match):
        numbers = []
        for part in re.findall(r"\d+", match.group(1)):
            n = section_of(part)
            if n not in numbers:
                numbers.append(n)
        return ("Sections " if len(numbers) > 1 else "Section ") + ", ".join(numbers)

    return _LINE_REF.sub(replace, str(text))


def figure_of(fid: str) -> tuple[str, str, str] | None:
    """(paper figure, what it shows, section) a figure of ``figures/`` redraws, else None."""
    return FIGURES.get(fid)
