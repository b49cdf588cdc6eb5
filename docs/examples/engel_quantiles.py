"""The worked example of docs/quantiles.md: three quantiles of food expenditure given income
(Engel's data, 235 Belgian households, 1857), an interval with its measured coverage, income as
a monotone feature, and a picture.

    python docs/examples/engel_quantiles.py   # needs the engel data file (docs/data.md)

Writes docs/img/engel_quantiles.png and the block between the ``engel-example`` markers of
docs/quantiles.md (the numbers quoted there come from this script, never by hand).
"""

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from proxboost import BoostingRegressor  # noqa: E402
from proxboost.experiments.datasets import load_dataset  # noqa: E402
from proxboost.experiments.plan.protocol import split_indices  # noqa: E402

DOCS = Path(__file__).resolve().parents[1]
LEVELS = [0.05, 0.5, 0.95]  # a 90 % interval from the outer pair, the median in between
N_SPLITS = 20
SETTINGS = dict(
    loss="pinball",
    tau=LEVELS,
    algo="prox",
    max_depth=2,
    learning_rate=0.1,
    n_estimators=300,
    step="auto",
    monotonic_cst=[1],  # food expenditure does not decrease with income
)


def model(seed):
    return BoostingRegressor(**SETTINGS, random_state=seed)


def coverage(lo, hi, y):
    return float(np.mean((y >= lo) & (y <= hi)))


def one_split(X, y, k):
    """Fit on half the rows, calibrate on a quarter, measure on the last quarter."""
    train, cal, test = split_indices(len(y), k, seed=0, fractions=(0.5, 0.25, 0.25))
    est = model(k).fit(X[train], y[train])
    lo, hi = est.predict_interval(X[test]).T
    raw = (coverage(lo, hi, y[test]), float(np.mean(hi - lo)))
    est.calibrate(X[cal], y[cal])
    lo, hi = est.predict_interval(X[test]).T
    return raw, (coverage(lo, hi, y[test]), float(np.mean(hi - lo))), est


def monotone_everywhere(est, X):
    """Predictions on a fine income grid (beyond the data on both sides) never decrease."""
    grid = np.linspace(0.5 * X.min(), 1.5 * X.max(), 2001)[:, None]
    return bool(np.all(np.diff(est.predict(grid), axis=0) >= 0))


def picture(X, y, est, path):
    grid = np.linspace(X.min(), X.max(), 500)[:, None]
    P = est.predict(grid)
    lo, hi = est.predict_interval(grid).T
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.scatter(X[:, 0], y, s=8, c="0.55", label="households")
    ax.fill_between(
        grid[:, 0], lo, hi, color="tab:blue", alpha=0.15, label="calibrated 90 % interval"
    )
    for j, tau in enumerate(LEVELS):
        ax.plot(grid[:, 0], P[:, j], lw=1.6, label=f"τ = {tau}")
    ax.set_xlabel("household income (Belgian francs)")
    ax.set_ylabel("food expenditure")
    ax.set_title("engel: three quantiles in one model, income monotone (split 0)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def main():
    X, y, _ = load_dataset("engel")
    X, y = np.asarray(X, float), np.asarray(y, float)
    runs = [one_split(X, y, k) for k in range(N_SPLITS)]
    raw = np.array([r[0] for r in runs])
    cal = np.array([r[1] for r in runs])
    monotone = all(monotone_everywhere(r[2], X) for r in runs)
    se = lambda a: a.std(ddof=1) / np.sqrt(len(a))  # noqa: E731
    img = DOCS / "img" / "engel_quantiles.png"
    img.parent.mkdir(exist_ok=True)
    picture(X, y, runs[0][2], img)
    block = "\n".join(
        [
            f"Over {N_SPLITS} random splits of the {len(y)} households (half to fit, a quarter to"
            " calibrate, a quarter to measure), the 90 % interval of the outer levels covers",
            f"**{raw[:, 0].mean():.1%} ± {se(raw[:, 0]):.1%}** of the test rows before calibration"
            f" (mean width {raw[:, 1].mean():.0f}) and **{cal[:, 0].mean():.1%} ±"
            f" {se(cal[:, 0]):.1%}** after it (mean width {cal[:, 1].mean():.0f}); ± is the",
            "standard error over splits. In every split the three quantiles are non-decreasing in"
            f" income on a grid reaching beyond the data: {'yes' if monotone else 'NO'}.",
        ]
    )
    page = DOCS / "quantiles.md"
    text = page.read_text()
    marked = re.compile(r"(<!-- engel-example -->\n).*?(<!-- /engel-example -->)", re.S)
    if not marked.search(text):
        raise SystemExit(f"{page}: the engel-example markers are missing")
    page.write_text(marked.sub(lambda m: m.group(1) + block + "\n" + m.group(2), text))
    print(block)
    print(f"wrote {img} and the engel-example block of {page}")


if __name__ == "__main__":
    main()
