"""proxboost: proximal boosting for non-differentiable losses.

Reference implementation of Fouillen, Boyer and Sangnier, "Proximal boosting: aggregating weak
learners to minimize non-differentiable losses".
"""

from importlib.metadata import PackageNotFoundError, version

from .boosting import BoostingClassifier, BoostingRegressor
from .losses import LOSSES, make_loss

try:  # the version of pyproject.toml, as installed
    __version__ = version("proxboost")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "unknown"
__all__ = ["BoostingClassifier", "BoostingRegressor", "LOSSES", "make_loss", "__version__"]
