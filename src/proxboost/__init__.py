"""proxboost: proximal boosting for non-differentiable losses.

Reference implementation of Fouillen, Boyer and Sangnier, "Proximal boosting: aggregating weak
learners to minimize non-differentiable losses".
"""

from .boosting import BoostingClassifier, BoostingRegressor
from .losses import LOSSES, make_loss

__version__ = "0.1.0"
__all__ = ["BoostingClassifier", "BoostingRegressor", "LOSSES", "make_loss", "__version__"]
