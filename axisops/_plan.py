"""Plans: everything a call derives from shapes, strides, dtypes and options, kept.

A *plan* is a callable made once for one combination of an operator, its
inputs' shapes, strides and dtypes, and its options: it holds the canonical
view's geometry, the kernel and its scalar arguments, the result's shape and
dtype and how to finish it. Calling it on arrays with that description runs the
kernel on their memory: the validation that depends on values (indices in
range) is all that is left to do per call. Families keep their plans in a
bounded :class:`PlanCache` under a key from :func:`array_key`.

A repeated call on a small array then costs a dictionary look-up, the kernel
and the result's allocation (about 2 us here) instead of the planning (about
20 us: axis normalisation, dtype rules, coalescing, strided bases).
"""
from __future__ import annotations

import numpy as np

from ._layout import needs_copy, strided_base

__all__ = ["PlanCache", "array_key", "axis_key", "base_maker", "readable_copy"]


class PlanCache:
    """A bounded mapping from keys to plans; the oldest plan is dropped first.

    Thread-safe as far as it needs to be: a lost insertion or eviction under a
    race only means a plan is made again.
    """

    def __init__(self, size: int = 512):
        self._plans: dict = {}
        self._size = size

    def get(self, key):
        """The plan for *key*, or None (also for a key that cannot be hashed)."""
        if key is None:
            return None
        try:
            return self._plans.get(key)
        except TypeError:  # an unhashable option (a list axis, say): no plan kept
            return None

    def put(self, key, plan):
        """Keep *plan* under *key* (when the key can be hashed); return *plan*."""
        if key is None:
            return plan
        plans = self._plans
        try:
            hash(key)
        except TypeError:
            return plan
        if len(plans) >= self._size:
            try:
                del plans[next(iter(plans))]
            except (StopIteration, KeyError, RuntimeError):  # another thread was quicker
                pass
        plans[key] = plan
        return plan

    def plan(self, key, make, *args):
        """The plan kept under *key*, or ``make(*args)``, kept under it (when
        *key* is not None and can be hashed)."""
        plan = self.get(key)
        return self.put(key, make(*args)) if plan is None else plan

    def clear(self) -> None:
        self._plans.clear()

    def __len__(self) -> int:
        return len(self._plans)


def array_key(x: np.ndarray) -> tuple:
    """What a plan may depend on of an array: shape, strides, dtype and alignment
    (a misaligned array is copied before a kernel reads it, so its view differs).
    Splice it into a key: ``(op, *array_key(x), ...)``."""
    return x.shape, x.strides, x.dtype, x.flags.aligned


def axis_key(axis):
    """*axis* when it may be part of a plan key: None, an int or a tuple of ints.

    Anything else (a NumPy integer, a list, a float that compares equal to an
    int) gets no key, so that it goes the validating way every time and can never
    hit a plan made for the int it equals.
    """
    if axis is None or type(axis) is int:
        return axis
    if type(axis) is tuple and all(type(a) is int for a in axis):
        return axis
    raise TypeError


def readable_copy(x: np.ndarray) -> np.ndarray:
    """A C-contiguous, aligned copy of *x* in native byte order (always a new
    array: ``ascontiguousarray`` would return a misaligned contiguous *x* itself)."""
    return np.array(x, dtype=x.dtype.newbyteorder("="), order="C", copy=True)


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)  # cheaper than a.flags.writeable = False
    return a


def base_maker(x: np.ndarray):
    """A fast function giving ``strided_base(y)[0]`` for any *y* described like *x*.

    The base of an array depends only on its memory, which for a given shape,
    strides and dtype is reached the same way: a C-contiguous array is its own
    ``reshape(-1)``; an array whose memory is a dense block walked in another
    order (a transposed or reversed view) is that after undoing the order;
    anything else (gaps, broadcasting, foreign byte order) goes through
    :func:`axisops._layout.strided_base`.

    >>> x = np.arange(6.0).reshape(2, 3).T[::-1]
    >>> make = base_maker(x)
    >>> bool(np.array_equal(make(x), strided_base(x)[0]))
    True
    """
    if x.size == 0 or needs_copy(x):
        return lambda y: strided_base(y)[0]
    if x.flags.c_contiguous:
        return lambda y: _readonly(y.reshape(-1))
    strides = [s if n > 1 else 0 for s, n in zip(x.strides, x.shape)]
    flip = tuple(slice(None, None, -1) if s < 0 else slice(None) for s in strides)
    order = sorted(range(x.ndim), key=lambda d: -abs(strides[d]))
    dense = x[flip].transpose(order)
    if not dense.flags.c_contiguous:
        return lambda y: strided_base(y)[0]
    if not any(s < 0 for s in strides):
        return lambda y: _readonly(y.transpose(order).reshape(-1))
    return lambda y: _readonly(y[flip].transpose(order).reshape(-1))


def viewed(make_base, dtype):
    """*make_base* (see :func:`base_maker`) with its base seen as *dtype*."""
    return lambda x: make_base(x).view(dtype)
