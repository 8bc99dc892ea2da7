"""Reference vector-Jacobian products, written from their definitions (see :mod:`axisops.reference`)."""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from ._common import COMPLEX_DTYPES, _as_input, _axes, _blocks, _out_shape, _unblocks
from .gather import (
    _along_args,
    _along_positions,
    _along_shape,
    _as_indices,
    _as_updates,
    _destinations,
    _gather_axis,
    _mode,
    _nd_args,
    _nd_source,
    _resolve,
    _scatter_args,
    scatter,
)
from .scan import _lanes, _scan_axis, _scan_shape, _unlanes, cummax, cumsum  # noqa: F401 (cummax: a doctest)
from .window import _positions, _unfold, _window_args, fold

# ------------------------------------------------------------------------- gradients

def _expand(g, x_shape, axes, keepdims, op):
    """*g* with the reduced axes as size-1 dimensions (``ValueError`` on a bad shape)."""
    g = np.asarray(g)
    want = _out_shape(x_shape, axes, keepdims)
    if g.shape != want:
        raise ValueError(f"grad.{op}: g has shape {g.shape}, expected {want}")
    return g.reshape(_out_shape(x_shape, axes, True))


def _scan_g(g, x_shape, axis, op):
    """*g* as an array of the scan's output shape (``ValueError`` otherwise)."""
    g = _as_input(g, f"grad.{op}")
    want = _scan_shape(x_shape, axis)
    if g.shape != want:
        raise ValueError(f"grad.{op}: g has shape {g.shape}, expected {want}")
    return g


class grad:
    """Reference vector-Jacobian products of the reductions, scans, gathers, scatter,
    unfold and fold (``axisops.grad``)."""

    @staticmethod
    def sum(g, x_shape, axis=None, keepdims=False):
        """``g`` broadcast back over the reduced axes.

        >>> grad.sum(np.array([1.0, 2.0]), (2, 3), axis=1)
        array([[1., 1., 1.],
               [2., 2., 2.]])
        """
        x_shape = tuple(operator.index(n) for n in x_shape)
        axes = _axes(axis, len(x_shape), "grad.sum")
        g = _expand(g, x_shape, axes, keepdims, "sum")
        return np.array(np.broadcast_to(g, x_shape))

    @staticmethod
    def mean(g, x_shape, axis=None, keepdims=False):
        """``g / n`` broadcast back over the reduced axes (``n`` reduced elements).

        >>> grad.mean(np.array(1.0), (2, 2))
        array([[0.25, 0.25],
               [0.25, 0.25]])
        """
        x_shape = tuple(operator.index(n) for n in x_shape)
        axes = _axes(axis, len(x_shape), "grad.mean")
        g = _expand(g, x_shape, axes, keepdims, "mean")
        n = math.prod(x_shape[a] for a in axes)
        res = np.result_type(g.dtype, np.float16)
        with np.errstate(all="ignore"):
            out = g.astype(np.float64) / n if n else g.astype(np.float64)
        return np.array(np.broadcast_to(out.astype(res), x_shape))

    @staticmethod
    def prod(g, x, axis=None, keepdims=False):
        """``g`` times the product of the *other* elements, without dividing.

        Exact with zeros: the product of the others is the exclusive prefix product
        times the exclusive suffix product.

        >>> grad.prod(np.array(1.0), np.array([2.0, 0.0, 0.0]))
        array([0., 0., 0.])
        >>> grad.prod(np.array(1.0), np.array([2.0, 0.0, 5.0]))
        array([ 0., 10.,  0.])
        """
        x = _as_input(x, "grad.prod")
        axes = _axes(axis, x.ndim, "grad.prod")
        g = _expand(g, x.shape, axes, keepdims, "prod")
        res = np.result_type(g.dtype, x.dtype)
        acc = np.float32 if res == np.float16 else res
        if x.size == 0:
            return np.zeros(x.shape, res)
        blocks, kept, _ = _blocks(x.astype(acc), axes)
        ones = np.ones(kept + (1,), acc)
        with np.errstate(all="ignore"):
            before = np.cumprod(np.concatenate([ones, blocks[..., :-1]], -1), -1)
            after = np.cumprod(np.concatenate([ones, blocks[..., :0:-1]], -1), -1)[..., ::-1]
            others = _unblocks(before * after, x.shape, axes)
            out = g.astype(acc) * others
        return np.array(out, dtype=res, order="C")  # (ascontiguousarray makes 0-d 1-d)

    @staticmethod
    def max(g, x, axis=None, keepdims=False):
        """``g`` split evenly between the elements equal to the maximum (``torch.amax``).

        >>> grad.max(np.array(1.0), np.array([2.0, np.nan, 1.0]))
        array([nan, nan, nan])
        """
        return grad._extreme(np.max, "max", g, x, axis, keepdims)

    @staticmethod
    def min(g, x, axis=None, keepdims=False):
        """``g`` split evenly between the elements equal to the minimum (``torch.amin``).

        >>> grad.min(np.array(6.0), np.array([1.0, 4.0, 1.0, 1.0]))
        array([2., 0., 2., 2.])
        """
        return grad._extreme(np.min, "min", g, x, axis, keepdims)

    @staticmethod
    def _extreme(func, op, g, x, axis, keepdims):
        x = _as_input(x, f"grad.{op}")
        axes = _axes(axis, x.ndim, f"grad.{op}")
        g = _expand(g, x.shape, axes, keepdims, op)
        res = np.result_type(g.dtype, x.dtype)
        acc = np.float32 if res == np.float16 else res
        mask = x == func(x, axis=axes, keepdims=True)  # ValueError over an empty axis
        count = np.sum(mask, axis=axes, keepdims=True)
        with np.errstate(all="ignore"):
            out = (g.astype(acc) / count.astype(acc)) * mask
        return np.array(out, dtype=res, order="C")  # (ascontiguousarray makes 0-d 1-d)

    # ------------------------------------------------------------------- scans

    @staticmethod
    def cumsum(g, x_shape, axis=None, exclusive=False, reverse=False):
        """The cumulative sum of ``g`` in the opposite direction (same *exclusive*).

        In ``g``'s dtype (float16 accumulated in float32), with ``x_shape``.

        >>> grad.cumsum(np.array([1.0, 2.0, 3.0]), (3,))
        array([6., 5., 3.])
        >>> grad.cumsum(np.array([1.0, 2.0, 3.0]), (3,), exclusive=True, reverse=True)
        array([0., 1., 3.])
        >>> grad.cumsum(np.arange(6.0), [2, 3])
        array([[15., 15., 14.],
               [12.,  9.,  5.]])
        """
        x_shape = tuple(operator.index(n) for n in x_shape)
        axis = _scan_axis(axis, len(x_shape), "grad.cumsum")
        g = _scan_g(g, x_shape, axis, "cumsum")
        out = cumsum(g.reshape(x_shape), axis, dtype=g.dtype, exclusive=exclusive,
                     reverse=not reverse)
        return out.reshape(x_shape)

    @staticmethod
    def cumprod(g, x, axis=None, exclusive=False, reverse=False):
        """From the definition, without dividing: exact with zeros in ``x``.

        Along a lane (forward, inclusive) ``dx_k = P_k * S_k`` with the exclusive
        prefix product ``P_k = prod_{i<k} x_i`` and
        ``S_k = sum_{j>=k} g_j * prod_{k<i<=j} x_i``; exclusive:
        ``S_k = sum_{j>k} g_j * prod_{k<i<j} x_i``; reverse is the same on the
        flipped lane. ``S_k`` is summed in nested form, ``g_k + x_{k+1} (g_{k+1} +
        x_{k+2} (...))``, so a factor multiplies only the terms that contain it: with
        infinities in ``x`` that gives inf where the expanded sum would add inf and
        inf * 0. A double loop over the lane, in the result dtype
        ``result_type(x, g, float16)`` (float16 in float32).

        >>> grad.cumprod(np.ones(3), np.array([2.0, 0.0, 5.0]))
        array([ 1., 12.,  0.])
        >>> grad.cumprod(np.ones(3), np.array([2.0, 3.0, 5.0]), exclusive=True)
        array([4., 2., 0.])
        """
        x = _as_input(x, "grad.cumprod")
        axis = _scan_axis(axis, x.ndim, "grad.cumprod")
        g = _scan_g(g, x.shape, axis, "cumprod")
        res = np.result_type(x.dtype, g.dtype, np.float16)
        acc = np.dtype(np.float32) if res == np.float16 else res
        xl = _lanes(x, axis).astype(acc)
        gl = _lanes(g.reshape(x.shape), axis).astype(acc)
        if reverse:
            xl, gl = xl[:, ::-1], gl[:, ::-1]
        m, n = xl.shape
        out = np.zeros((m, n), acc)
        with np.errstate(all="ignore"):
            before = np.ones((m, n), acc)            # P_k
            for k in range(1, n):
                before[:, k] = before[:, k - 1] * xl[:, k - 1]
            for k in range(n):
                # S_k in nested (Horner) form, innermost first: inclusive
                # g_k + x_{k+1} (g_{k+1} + x_{k+2} (...)); exclusive
                # g_{k+1} + x_{k+1} (g_{k+2} + x_{k+2} (...)).
                first, shift = (k + 1, 0) if exclusive else (k, 1)
                total = np.zeros(m, acc)
                for j in range(n - 1, first - 1, -1):
                    total = gl[:, j] if j == n - 1 else gl[:, j] + xl[:, j + shift] * total
                out[:, k] = before[:, k] * total
        if reverse:
            out = out[:, ::-1]
        return _unlanes(out.astype(res), x.shape, axis).reshape(x.shape)

    @staticmethod
    def cummax(g, indices, x_shape, axis=None):
        """``zeros(x_shape)`` with ``g`` added at *indices* along *axis* (Paddle, torch).

        >>> v, i = cummax(np.array([1.0, 3.0, 2.0, 3.0]))
        >>> grad.cummax(np.array([1.0, 2.0, 4.0, 8.0]), i, (4,))
        array([1., 6., 0., 8.])
        """
        return grad._scatter_add("cummax", g, indices, x_shape, axis)

    @staticmethod
    def cummin(g, indices, x_shape, axis=None):
        """As :meth:`cummax`: ``g`` scatter-added at the indices of the running minima.

        >>> grad.cummin(np.ones((1, 3)), np.array([[0, 0, 2]]), (1, 3), axis=1)
        array([[2., 0., 1.]])
        """
        return grad._scatter_add("cummin", g, indices, x_shape, axis)

    @staticmethod
    def _scatter_add(op, g, indices, x_shape, axis):
        x_shape = tuple(operator.index(n) for n in x_shape)
        axis = _scan_axis(axis, len(x_shape), f"grad.{op}")
        g = _scan_g(g, x_shape, axis, op)
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":
            raise TypeError(f"grad.{op}: indices must be integers, got {indices.dtype}")
        if indices.shape != g.shape:
            raise ValueError(f"grad.{op}: indices have shape {indices.shape}, "
                             f"expected g's shape {g.shape}")
        n = math.prod(x_shape) if axis is None else x_shape[axis]
        bad = (indices < 0) | (indices >= n)
        if np.any(bad):
            pos = tuple(int(i) for i in np.argwhere(bad)[0])
            raise IndexError(f"grad.{op}: index {indices[pos]} at position {pos} is out "
                             f"of range [0, {n})")
        res = g.dtype
        acc = {"i": np.dtype(np.int64), "u": np.dtype(np.uint64),
               "f": np.dtype(np.float32) if res == np.float16 else res}.get(res.kind, res)
        gl = _lanes(g.reshape(x_shape), axis).astype(acc)
        il = _lanes(indices.reshape(x_shape), axis).astype(np.int64)
        out = np.zeros(gl.shape, acc)
        rows = np.broadcast_to(np.arange(gl.shape[0])[:, None], il.shape)
        with np.errstate(all="ignore"):
            np.add.at(out, (rows, il), gl)  # serial, in the order of j along each lane
        return _unlanes(out.astype(res), x_shape, axis).reshape(x_shape)

    @staticmethod
    def logcumsumexp(g, x, axis=None):
        """``dx_k = sum_{j>=k} g_j * exp(x_k - y_j)`` with ``y = logcumsumexp(x)``.

        The factor ``exp(x_k - y_j)`` is 1 where ``x_k == y_j`` (also both ``-inf``
        or both ``+inf``), so a ``-inf`` prefix passes ``g`` straight through; a NaN
        in a lane makes the lane's gradient NaN. Computed in float64 by a double
        loop and rounded once: float dtypes keep theirs, bool and ints give float64.

        >>> grad.logcumsumexp(np.array([1.0, 1.0]), np.array([0.0, 0.0]))
        array([1.5, 0.5])
        >>> grad.logcumsumexp(np.array([2.0, 3.0]), np.array([-np.inf, 1.0]))
        array([2., 3.])
        """
        x = _as_input(x, "grad.logcumsumexp")
        axis = _scan_axis(axis, x.ndim, "grad.logcumsumexp")
        g = _scan_g(g, x.shape, axis, "logcumsumexp")
        res = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
        xl = _lanes(x, axis).astype(np.float64)
        gl = _lanes(g.reshape(x.shape), axis).astype(np.float64)
        m, n = xl.shape
        out = np.zeros((m, n))
        with np.errstate(all="ignore"):
            yl = np.logaddexp.accumulate(xl, axis=1) if n else xl
            for k in range(n):
                for j in range(k, n):
                    same = xl[:, k] == yl[:, j]
                    out[:, k] += gl[:, j] * np.where(same, 1.0, np.exp(xl[:, k] - yl[:, j]))
        return _unlanes(out.astype(res), x.shape, axis).reshape(x.shape)

    # ------------------------------------------------------- gather and scatter

    @staticmethod
    def _g(g, want, op):
        """*g* as a float array of the forward result's shape *want*, and its accumulator.

        Float ``g`` keeps its dtype (float16 accumulates in float32); integer and
        bool ``g`` become float64. Other dtypes: ``TypeError``; another shape:
        ``ValueError``.
        """
        g = np.asarray(g)
        if g.dtype.kind not in "biufc" or (g.dtype.kind == "c" and g.dtype not in COMPLEX_DTYPES):
            raise TypeError(f"{op}: unsupported dtype {g.dtype} for g")
        if g.dtype.kind not in "fc":
            g = g.astype(np.float64)
        if g.shape != tuple(want):
            raise ValueError(f"{op}: g has shape {g.shape}, expected {tuple(want)}")
        acc = np.dtype(np.float32) if g.dtype == np.float16 else g.dtype
        return g, acc

    @staticmethod
    def take(g, indices, x_shape, axis=None, mode="raise"):
        """``zeros(x_shape)`` with ``g`` added at the indices :func:`take` read.

        Wrapped and clipped indices are resolved as the forward resolves them; with
        ``mode="fill"`` the positions that read the fill value add nothing.
        Sequential additions in C order of the index positions.

        >>> grad.take(np.array([1.0, 2.0, 4.0]), np.array([2, -1, 0]), (3,))
        array([4., 0., 3.])
        >>> grad.take(np.ones((2, 2)), np.array([0, 5]), (2, 3), axis=1, mode="fill")
        array([[1., 0., 0.],
               [1., 0., 0.]])
        >>> grad.take(np.ones(2, np.int8), np.array([7, 7]), (2, 2), mode="wrap")
        array([[0., 0.],
               [0., 2.]])
        """
        op = "grad.take"
        x_shape = tuple(operator.index(n) for n in x_shape)
        indices = _as_indices(indices, op)
        axis = _gather_axis(axis, len(x_shape), op)
        mode = _mode(mode, op)
        src, ax = ((math.prod(x_shape),), 0) if axis is None else (x_shape, axis)
        g, acc = grad._g(g, src[:ax] + indices.shape + src[ax + 1:], op)
        pos, used = _resolve(indices, src[ax], mode, op)
        ga = g.astype(acc)
        out = np.zeros(src, acc)
        lead = (slice(None),) * ax
        with np.errstate(all="ignore"):  # inf - inf
            for p in np.ndindex(indices.shape):
                if used[p]:
                    out[lead + (pos[p],)] += ga[lead + p]
            return out.astype(g.dtype).reshape(x_shape)

    @staticmethod
    def take_along_axis(g, indices, x_shape, axis, mode="raise"):
        """``zeros(x_shape)`` with each ``g[p]`` added where :func:`take_along_axis` read it.

        Where ``x`` was broadcast (a size 1 meeting a larger size of *indices*) the
        contributions add up; where only a leading part was read the rest stays 0.

        >>> grad.take_along_axis(np.ones((2, 2)), np.array([[1, 1], [0, 1]]), (2, 3), 1)
        array([[0., 2., 0.],
               [1., 1., 0.]])
        >>> grad.take_along_axis(np.ones((1, 3)), np.array([[0, 1, 0]]), (2, 1), 0)
        array([[2.],
               [1.]])
        """
        op = "grad.take_along_axis"
        x_shape = tuple(operator.index(n) for n in x_shape)
        indices = _as_indices(indices, op)
        src, ax = _along_args(x_shape, indices, axis, op)
        mode = _mode(mode, op)
        shape = _along_shape(src, indices.shape, ax, op)
        g, acc = grad._g(g, shape, op)
        pos, used = _resolve(indices, src[ax], mode, op)
        ga = g.astype(acc)
        out = np.zeros(src, acc)
        with np.errstate(all="ignore"):
            for p, ip, xp in _along_positions(src, indices.shape, ax, shape):
                if used[ip]:
                    out[xp[:ax] + (pos[ip],) + xp[ax + 1:]] += ga[p]
            return out.astype(g.dtype).reshape(x_shape)

    @staticmethod
    def gather_nd(g, indices, x_shape, batch_dims=0):
        """``zeros(x_shape)`` with each slice ``g[p]`` added where :func:`gather_nd` read it.

        >>> grad.gather_nd(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1], [1]]), (2, 2))
        array([[0., 0.],
               [4., 6.]])
        """
        op = "grad.gather_nd"
        x_shape = tuple(operator.index(n) for n in x_shape)
        indices = _as_indices(indices, op)
        b, q = _nd_args(x_shape, indices, batch_dims, op)
        g, acc = grad._g(g, indices.shape[:-1] + x_shape[b + q:], op)
        ga = g.astype(acc)
        out = np.zeros(x_shape, acc)
        with np.errstate(all="ignore"):
            for p in np.ndindex(indices.shape[:-1]):
                out[_nd_source(p, indices, x_shape, b, q)] += ga[p]
            return out.astype(g.dtype)

    @staticmethod
    def scatter(g, x, indices, updates, axis, reduce=None):
        """``(grad_x, grad_updates)`` of :func:`scatter`, by torch's ``scatter_reduce`` rules.

        Per destination ``d`` and the updates ``u_1 .. u_k`` written to it (C order):

        * ``None``: ``grad_x[d] = 0`` if ``k > 0``; the last update gets ``g[d]``,
          the overwritten ones 0 (the derivative of last-wins; torch gives all ``g[d]``).
        * ``"add"``: ``grad_x = g``; every update gets ``g[d]``.
        * ``"mul"``: ``grad_x[d] = g[d] * (u_1 * ... * u_k)``; ``u_j`` gets
          ``g[d] * x[d] * prod(u_i, i != j)``: products, never a division.
        * ``"max"``/``"min"``: ``g[d]`` split evenly between ``x[d]`` and the
          updates equal to the result (NaN equals NaN), the rest 0.

        ``grad_updates`` has updates' shape: summed over dimensions that were
        broadcast, 0 outside the leading part that was used. Both in ``g``'s dtype
        (float16 computed in float32; integer or bool ``g`` give float64).

        >>> x, idx = np.array([1.0, 5.0]), np.array([0, 0, 1])
        >>> grad.scatter(np.array([1.0, 10.0]), x, idx, np.array([2.0, 3.0, 4.0]), 0, "mul")
        (array([ 6., 40.]), array([ 3.,  2., 50.]))
        >>> grad.scatter(np.array([1.0, 10.0]), x, idx, np.array([2.0, 3.0, 5.0]), 0, "max")
        (array([0., 5.]), array([0., 1., 5.]))
        >>> grad.scatter(np.array([1.0, 10.0]), x, idx, np.array(7.0), 0)
        (array([0., 0.]), array(11.))
        """
        op = "grad.scatter"
        x = _as_input(x, op)
        indices = _as_indices(indices, op)
        updates = _as_updates(updates, x.dtype, op)
        axis, used = _scatter_args(x.shape, indices, updates, axis, reduce, x.dtype, op)
        g, acc = grad._g(g, x.shape, op)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            u_x = used.astype(x.dtype)          # the updates as the forward combined them
            u, xa, ga = u_x.astype(acc), x.astype(acc), g.astype(acc)
        result = scatter(x, indices, updates, axis, reduce=reduce) if reduce in (
            "max", "min") else None
        gx = np.array(ga, order="C")
        gu = np.zeros(indices.shape, acc)
        same = lambda a, b: a == b or (a != a and b != b)  # noqa: E731 - NaN equals NaN
        with np.errstate(all="ignore"):
            for d, ps in _destinations(indices, axis, x.shape[axis]).items():
                if reduce is None:
                    gx[d] = 0
                    gu[ps[-1]] = ga[d]
                elif reduce == "add":
                    for p in ps:
                        gu[p] = ga[d]
                elif reduce == "mul":
                    everything = acc.type(1)
                    for p in ps:
                        everything = everything * u[p]
                    gx[d] = ga[d] * everything
                    for p in ps:
                        others = acc.type(1)
                        for p2 in ps:
                            if p2 != p:
                                others = others * u[p2]
                        gu[p] = ga[d] * xa[d] * others
                else:
                    r = result[d]
                    winners = [p for p in ps if same(u_x[p], r)]
                    x_wins = same(x[d], r)
                    share = ga[d] / acc.type(len(winners) + x_wins)
                    gx[d] = share if x_wins else 0
                    for p in winners:
                        gu[p] = share
            return gx.astype(g.dtype), grad._to_updates(gu, updates.shape).astype(g.dtype)

    @staticmethod
    def _to_updates(gu, shape):
        """The gradient of the updates used (indices' shape) as updates' own *shape*."""
        if gu.shape == shape:
            return gu
        if len(shape) == gu.ndim and all(s >= n for s, n in zip(shape, gu.shape)):
            out = np.zeros(shape, gu.dtype)
            out[tuple(slice(0, n) for n in gu.shape)] = gu
            return out
        lead = gu.ndim - len(shape)  # broadcast: sum the new and the stretched dimensions
        summed = gu.sum(axis=tuple(range(lead)))
        stretched = tuple(d for d, s in enumerate(shape) if s == 1 and summed.shape[d] != 1)
        return np.array(summed.sum(axis=stretched, keepdims=True).reshape(shape))

    # ---------------------------------------------------------- sliding windows

    @staticmethod
    def _window_g(g, op):
        """*g* as a float array (integer and bool ``g`` become float64; else ``TypeError``)."""
        g = np.asarray(g)
        if g.dtype.kind not in "biufc" or (g.dtype.kind == "c" and g.dtype not in COMPLEX_DTYPES):
            raise TypeError(f"{op}: unsupported dtype {g.dtype} for g")
        return g if g.dtype.kind in "fc" else g.astype(np.float64)

    @staticmethod
    def unfold(g, x_shape, kernel_size, dilation=1, padding=0, stride=1, channels_last=False):
        """The gradient of :func:`unfold`: :func:`fold` of *g* onto x's spatial shape.

        *g* must have the shape unfold gives for an *x* of shape *x_shape*
        (``ValueError`` otherwise). In g's dtype (float16 accumulated in float32);
        integer and bool ``g`` give float64.

        >>> grad.unfold(np.ones((4, 4)), (1, 3, 3), 2)
        array([[[1., 2., 1.],
                [2., 4., 2.],
                [1., 2., 1.]]])
        >>> grad.unfold(np.ones((2, 4), np.int32), (1, 3), (2,), padding=1)
        array([[2., 2., 2.]])
        """
        op = "grad.unfold"
        g = grad._window_g(g, op)
        x_shape = tuple(operator.index(n) for n in x_shape)
        kernel, dilation, pads, stride = _window_args(kernel_size, dilation, padding, stride, op)
        d = len(kernel)
        if len(x_shape) not in (d + 1, d + 2):
            raise ValueError(f"{op}: x_shape must have {d + 2} or {d + 1} dimensions for a "
                             f"{d}-D kernel, got {x_shape}")
        spatial = x_shape[-d - 1:-1] if channels_last else x_shape[-d:]
        c = x_shape[-1] if channels_last else x_shape[-d - 1]
        K = math.prod(kernel)
        L = math.prod(_positions(spatial, kernel, dilation, pads, stride, op))
        want = ((L, K * c) if channels_last else (c * K, L))
        want = x_shape[:1] + want if len(x_shape) == d + 2 else want
        if g.shape != want:
            raise ValueError(f"{op}: g has shape {g.shape}, expected {want}")
        return fold(g, spatial, kernel, dilation=dilation, padding=pads, stride=stride,
                    channels_last=channels_last).reshape(x_shape)

    @staticmethod
    def fold(g, kernel_size, dilation=1, padding=0, stride=1, channels_last=False):
        """The gradient of :func:`fold`: :func:`unfold` of *g* (fold's output shape).

        In g's dtype; integer and bool ``g`` give float64.

        >>> grad.fold(np.arange(4.0).reshape(1, 4), (2,), padding=((0, 1),))
        array([[0., 1., 2., 3.],
               [1., 2., 3., 0.]])
        """
        g = grad._window_g(g, "grad.fold")
        return _unfold(g, kernel_size, dilation, padding, stride, channels_last, "grad.fold")
