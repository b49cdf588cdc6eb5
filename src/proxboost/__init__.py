"""proxboost: proximal boosting for non-differentiable losses.

Reference implementation of Fouillen, Boyer and Sangnier, "Proximal boosting: aggregating weak
learners to minimize non-differentiable losses".
"""

from importlib.metadata import PackageNotFoundError, version

from proxboost._numba_cache import use_versioned_cache

use_versioned_cache()  # before numba is imported: a folder per version of the kernel sources

from proxboost.boosting import BoostingClassifier, BoostingRegressor  # noqa: E402 (after the cache)
from proxboost.losses import LOSSES, make_loss, register_loss, unregister_loss  # noqa: E402

try:  # the version is pyproject.toml's, read from the installed distribution
    __version__ = version("proxboost")
except PackageNotFoundError:  # imported from a source tree that is not installed
    __version__ = "0+unknown"
__all__ = [
    "BoostingClassifier",
    "BoostingRegressor",
    "LOSSES",
    "make_loss",
    "register_loss",
    "unregister_loss",
    "__version__",
]
