"""axisops: fast, correct tensor axis operators for NumPy users.

Reductions and arg-reductions along any axes, scans along one axis, and gathers
and scatters along an axis, sliding windows (unfold/fold), with their gradients in :mod:`axisops.grad`. Kernels
are compiled by Numba on first use (or ahead of time with ``axisops warmup``) and
cached on disk.

>>> import numpy as np, axisops
>>> axisops.argmax(np.array([[1, 3], [4, 2]]), axis=1)
array([1, 0])
"""
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

# _omp: Numba's OpenMP layer is loaded now, with the bounded polling of that
# module (~20 ms): loaded later, after a library that launched it first (numbagg's
# parallel functions do), OpenMP could not be used for planned calls at all.
from . import _jit, _omp, grad  # noqa: F401
from ._alloc import pool_limit
from ._jit import thread_limit
from .gather import gather_nd, scatter, take, take_along_axis
from .missing import (
    count,
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmean,
    nanmin,
    nanprod,
    nanstd,
    nansum,
    nanvar,
    std,
    var,
)
from .moving import (
    moving_argmax,
    moving_argmin,
    moving_max,
    moving_mean,
    moving_min,
    moving_std,
    moving_sum,
    moving_var,
)
from .moving_order import moving_median, moving_quantile, moving_rank
from .order import (
    argpartition,
    argsort,
    kthvalue,
    median,
    nanmedian,
    nanquantile,
    partition,
    quantile,
    rank,
    sort,
    top_k,
)
from .pool import avg_pool, max_pool
from .reduce import argmax, argmin, max, mean, min, prod, sum, unravel
from .scan import ValuesIndices, cummax, cummin, cumprod, cumsum, logcumsumexp
from .window import fold, unfold

try:
    __version__ = _version("axisops")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.1.0"

_jit.initialise_in_background()

__all__ = ["sum", "prod", "mean", "max", "min", "argmax", "argmin", "unravel",
           "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "ValuesIndices",
           "take", "take_along_axis", "gather_nd", "scatter", "unfold", "fold",
           "nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
           "nanargmax", "nanargmin", "nancumsum", "nancumprod", "count", "var", "std",
           "moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max",
           "moving_min", "moving_argmax", "moving_argmin",
           "max_pool", "avg_pool",
           "sort", "argsort", "top_k", "partition", "argpartition", "kthvalue", "median",
           "nanmedian", "quantile", "nanquantile", "rank", "moving_median", "moving_quantile",
           "moving_rank",
           "grad", "pool_limit", "thread_limit", "__version__"]
