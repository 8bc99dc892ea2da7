"""Vector-Jacobian products of the axisops operators.

Each function takes the gradient ``g`` of the forward's output first, then what
the forward must save (``x_shape`` where the gradient does not depend on the
values, ``x`` itself where it does), then the forward's own arguments, and
returns the gradient with respect to ``x`` with ``x``'s shape (also where the
forward flattened it, ``axis=None``). ``argmax`` and ``argmin`` have no gradient.

Every function here is named after the operator of :mod:`axisops` whose
gradient it is (``axisops.grad.cummax`` is the gradient of ``axisops.cummax``).
``cummax`` and ``cummin`` save the forward's ``indices`` instead of ``x``;
``scatter`` returns a tuple, the gradients with respect to ``x`` and to
``updates``. The options (``axis``, ``keepdims``, ``mode``, ...) must be those
of the forward call.

>>> import numpy as np
>>> import axisops
>>> axisops.grad.max(np.ones(2), np.array([[1., 3., 3.], [2., 0., 1.]]), axis=1)
array([[0. , 0.5, 0.5],
       [1. , 0. , 0. ]])
"""


from __future__ import annotations

from .gather import gather_nd, scatter, take, take_along_axis
from .missing import (
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
    moving_max,
    moving_mean,
    moving_min,
    moving_std,
    moving_sum,
    moving_var,
)
from .moving_order import moving_median, moving_quantile
from .order import kthvalue, median, nanmedian, nanquantile, partition, quantile, sort, top_k
from .pool import avg_pool, max_pool
from .reduce import max, mean, min, prod, sum
from .scan import cummax, cummin, cumprod, cumsum, logcumsumexp
from .window import fold, unfold

__all__ = ["sum", "mean", "prod", "max", "min",
           "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp",
           "take", "take_along_axis", "gather_nd", "scatter", "unfold", "fold",
           "nansum", "nanmean", "nanprod", "nanmax", "nanmin", "nancumsum", "nancumprod",
           "var", "std", "nanvar", "nanstd", "max_pool", "avg_pool",
           "moving_sum", "moving_mean", "moving_var", "moving_std", "moving_max", "moving_min",
           "sort", "top_k", "kthvalue", "partition", "median", "nanmedian", "quantile",
           "nanquantile", "moving_median", "moving_quantile"]


# One public path: each gradient is axisops.grad.<name>, whichever module of the
# package defines it (the dask and CUDA front ends find theirs by that name; a
# dask task pickles the function by it).
for _name in __all__:
    _func = globals()[_name]
    _func.__module__ = __name__
    getattr(_func, "__wrapped__", _func).__module__ = __name__
del _name, _func
