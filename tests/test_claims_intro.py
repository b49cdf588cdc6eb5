"""What produces G's plateau (statement 7a's context): counted from the introduction's
sensitivity grid, each G run once whatever the number of λ its P runs have."""

import numpy as np
import pandas as pd

from proxboost.experiments.claims import judge
from proxboost.experiments.claims.intro import plateau_context

T = np.arange(501)
FLAT = 0.12 + 0.5 * np.exp(-T / 20)  # flat from t = 250 on: 7a confirmed
FALLING = 0.6 * np.exp(-T / 200)  # falls by a factor e^-1.25 from 250 to 500: contradicted


def _grid(curve_frame, gradient_by_nu, steps=(1.0, 100.0), seeds=(0, 1)):
    frames = []
    for nu, g in gradient_by_nu.items():
        for seed in seeds:
            frames.append(
                curve_frame("intro", "lad", "gradient", 2, g, seed=seed, learning_rate=nu)
            )
            for step in steps:
                frames.append(
                    curve_frame(
                        "intro", "lad", "prox", 2, FALLING, step=step, seed=seed, learning_rate=nu
                    )
                )
    return pd.concat(frames, ignore_index=True)


def test_the_plateau_is_placed_by_learning_rate_and_counted_once_per_g_run(curve_frame):
    text = plateau_context(_grid(curve_frame, {1.0: FLAT, 0.05: FALLING}))
    # two seeds per ν, each G run counted once although its P runs have two λ
    assert "ν = 1: midpoint 2/2 at 0.12;" in text
    assert "ν = 0.05: midpoint 0/2." in text
    assert text.index("ν = 1:") < text.index("ν = 0.05:")  # largest ν first
    assert "Nearest the paper's level 0.12: ν = 1," in text and "median C_G(T) 0.12" in text


def test_no_context_without_a_grid_of_several_learning_rates(curve_frame):
    assert plateau_context(_grid(curve_frame, {0.05: FLAT})) == ""
    assert plateau_context(pd.DataFrame()) == ""


def test_statement_7a_ends_with_its_context(curve_frame):
    curves = _grid(curve_frame, {1.0: FLAT, 0.05: FALLING})
    claims = judge(curves, None)
    numbers = claims[(claims["id"] == "7a") & (claims["scope"] == "all")]["numbers"].iloc[0]
    assert numbers.endswith(plateau_context(curves))
    other = claims[(claims["id"] == "7b") & (claims["scope"] == "all")]["numbers"].iloc[0]
    assert "Where G plateaus" not in other
