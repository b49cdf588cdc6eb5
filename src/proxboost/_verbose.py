"""The progress lines of ``verbose=1`` and above, as scikit-learn's gradient boosting prints
them."""

import time


class VerboseReporter:
    """Progress lines on scikit-learn's gradient-boosting schedule.

    ``verbose=1``: iterations 1-10, then every 10th up to 100, every 100th up to 1000, ...;
    ``verbose>1``: every iteration; ``verbose=0``: nothing.
    """

    def __init__(self, verbose, n_estimators, with_eval, with_validation):
        self.verbose, self.n_estimators = int(verbose), n_estimators  # True counts as 1
        if not self.verbose:
            return
        header = ["Iter", "Train Loss"] + ["Eval Loss"] * with_eval + ["Val Loss"] * with_validation
        print(("%10s " + "%16s " * len(header)) % (*header, "Remaining Time"))
        self.mod = 1
        self.start = time.perf_counter()

    def update(self, t, train, eval_loss, val_loss):
        if not self.verbose or (t + 1) % self.mod:
            return
        left = (self.n_estimators - t - 1) * (time.perf_counter() - self.start) / (t + 1)
        left = f"{left / 60:.2f}m" if left > 60 else f"{left:.2f}s"
        cells = [f"{t + 1:>10d}", f"{train:>16.4f}"]
        cells += [f"{v:>16.4f}" for v in (eval_loss, val_loss) if v is not None]
        print(" ".join(cells + [f"{left:>16s}"]))
        if self.verbose == 1 and (t + 1) // (self.mod * 10) > 0:
            self.mod *= 10
