"""The second reading of the real-world statements in ``results/SUMMARY.md``: their verdicts under
the corrected resampled t-test beside the Wilcoxon ones, and which survive it (docs/claims.md,
second reading). Read from the ``test=corrected t-test`` rows of ``claims.csv``; nothing is judged
here."""

from __future__ import annotations

import pandas as pd

from proxboost.experiments.claims.criteria import CORRECTED_T
from proxboost.experiments.claims.judging import SECOND_READING, second_readings

__all__ = ["SECOND", "corrected_table", "second_details"]

#: the scope prefix of a second-reading row (the corrected resampled t-test) in claims.csv
SECOND = f"test={CORRECTED_T}"


def _cell(text) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def corrected_table(claims: pd.DataFrame) -> list[str]:
    """The real-world verdicts under the second reading (corrected resampled t-test) beside the
    Wilcoxon ones, and which survive it."""
    second = second_readings(claims)
    if second.empty:
        return []
    lines = [
        "### Real-world verdicts under the corrected resampled t-test",
        "",
        (
            "The 20 splits of the real-world protocol share rows, so the Wilcoxon p-values that"
            " decide the verdicts above are optimistic. As a second reading, every real-world"
            " statement is judged again on the same protocol and cells with the Nadeau–Bengio"
            " corrected resampled t-test (n_test/n_train = 25/75 = 1/3: the tested model is"
            " refitted on train ∪ validation) in place of Wilcoxon, Holm-adjusted alike, everything"
            " else in its criterion unchanged (docs/claims.md, real data). The verdicts above stay"
            " the Wilcoxon ones; a verdict *survives* when the second reading gives the same."
        ),
        "",
        "| id | reading | Wilcoxon | corrected t-test | survives | cells whose verdict changes |",
        "|---|---|---|---|---|---|",
    ]
    for _, r in second.iterrows():
        lines.append(
            f"| {r['id']} | {_cell(r['reading'] or 'headline')} | {r['wilcoxon']} |"
            f" {r['corrected']} | {'yes' if r['survives'] else '**no**'} | {_cell(r['cells'])} |"
        )

    def named(r):
        return r["id"] + (f" ({r['reading']})" if r["reading"] else "")

    kept = [named(r) for _, r in second.iterrows() if r["survives"]]
    flipped = [
        f"{named(r)} {r['wilcoxon']} → {r['corrected']}"
        for _, r in second.iterrows()
        if not r["survives"]
    ]
    moved = sum(
        len(str(c).split(", ")) for c in second["cells"] if c not in ("none", "no p-value read")
    )
    lines += [
        "",
        f"- Survive the corrected test: {len(kept)} of {len(second)} verdicts"
        f" ({', '.join(kept) or 'none'})"
        + (f"; change: {', '.join(flipped)}" if flipped else "")
        + f". Cells whose verdict changes (inside the statements): {moved}.",
        "",
    ]
    return lines


def second_details(g: pd.DataFrame) -> list[str]:
    """The second-reading rows of one statement's rows ``g``, for its details (none: [])."""
    second = g[g["scope"].str.startswith(SECOND)]
    if second.empty:
        return []
    lines = [f"{SECOND_READING}:", ""]
    lines += [
        f"- **{r['scope'][len(SECOND) :].removeprefix(';reading=') or 'headline'}**:"
        f" {r['verdict']}. {r['numbers'].split('. Second reading')[0]}."
        for _, r in second.iterrows()
    ]
    return lines + [""]
