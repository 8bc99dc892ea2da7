"""The window-reduction workloads: pooling of a feature map, and moving windows
along the rows of a float32 matrix.

Pooling uses the sliding-window workloads' image (``window.window_image_shape``:
a ResNet stage-2 feature map in the full bench) against PyTorch's
``max_pool2d``/``avg_pool2d`` (NCHW, and channels last: PyTorch's channels_last
memory format) and ONNX Runtime's MaxPool/AveragePool; NumPy's reference is a
``sliding_window_view`` reduction. The moving windows run along the rows of
``moving_matrix_shape(shape)`` against bottleneck's and numbagg's ``move_*`` and
pandas' ``rolling`` (along the columns of a DataFrame of the transposed matrix, a
view); NumPy's reference is a ``sliding_window_view`` reduction too.
"""
from __future__ import annotations

import numpy as np

from .onnx import onnx_runner
from .systems import FULL_SHAPE, QUICK_SHAPE, _bottleneck, _numbagg, _torch
from .window import window_image_shape
from .workload import Workload, _axisops_fn, exact_check, float32_sum_check

#: The pooling: the ResNet stem's 3x3 max pooling with stride 2 and padding 1, and
#: a 2x2 average pooling with stride 2.
MAX_KERNEL, MAX_STRIDE, MAX_PADDING = 3, 2, 1
AVG_KERNEL = 2


def _image(channels_last: bool):
    def setup(shape, rng):
        n, c, h, w = window_image_shape(shape)
        return (rng.random((n, h, w, c) if channels_last else (n, c, h, w), dtype=np.float32),)
    return setup


def numpy_pool(x: np.ndarray, reduce, k: int, s: int, p: int, channels_last: bool) -> np.ndarray:
    """A pooling in NumPy: ``np.pad`` with -inf (max) or 0, ``sliding_window_view``,
    the stride as a slice, and the reduction over the window's axes."""
    from numpy.lib.stride_tricks import sliding_window_view

    spatial = (1, 2) if channels_last else (2, 3)
    pads = [(0, 0)] * 4
    for a in spatial:
        pads[a] = (p, p)
    fill = -np.inf if reduce is np.max else 0
    padded = np.pad(x, pads, constant_values=fill) if p else x
    windows = sliding_window_view(padded, (k, k), axis=spatial)
    pick = [slice(None)] * 4
    for a in spatial:
        pick[a] = slice(None, None, s)
    return reduce(windows[tuple(pick)], axis=(-2, -1))


def pool_workload(op: str, channels_last: bool = False) -> Workload:
    """``max_pool(x, 3, stride=2, padding=1)`` or ``avg_pool(x, 2)`` of the feature map."""
    is_max = op == "max_pool"
    k, s, p = (MAX_KERNEL, MAX_STRIDE, MAX_PADDING) if is_max else (AVG_KERNEL, AVG_KERNEL, 0)

    def axisops_factory(x):
        fn = _axisops_fn(op)
        return lambda: fn(x, k, stride=s, padding=p, channels_last=channels_last)

    def numpy_factory(x):
        reduce = np.max if is_max else np.mean
        return lambda: numpy_pool(x, reduce, k, s, p, channels_last)

    def torch_factory(x):
        torch = _torch()
        fn = torch.nn.functional.max_pool2d if is_max else torch.nn.functional.avg_pool2d
        t = torch.from_numpy(x)
        if not channels_last:
            return lambda: fn(t, k, stride=s, padding=p)
        nchw = t.permute(0, 3, 1, 2)  # channels_last memory format: torch's NHWC kernel
        return lambda: fn(nchw, k, stride=s, padding=p).permute(0, 2, 3, 1)

    def onnx_factory(x):
        if channels_last:
            raise NotImplementedError("ONNX pools NCHW only")
        attributes = {"kernel_shape": [k, k], "strides": [s, s], "pads": [p] * 4}
        return onnx_runner("MaxPool" if is_max else "AveragePool", x, out_dtype=x.dtype,
                           out_rank=4, attributes=attributes)

    layout = "channels_last " if channels_last else ""
    what = (f"{k}x{k} stride {s} padding {p}" if is_max else f"{k}x{k} stride {s}")
    return Workload(
        name=f"{op} {k}x{k} {layout}".strip(),
        op=op,
        setup=_image(channels_last),
        systems={"axisops": axisops_factory, "numpy": numpy_factory, "torch": torch_factory,
                 "onnxruntime": onnx_factory},
        check=exact_check if is_max else float32_sum_check,
        note=(f"{what} of the float32 feature map of the window workloads"
              + (", (N, H, W, C); torch in its channels_last memory format" if channels_last
                 else "") + "; NumPy: np.pad + sliding_window_view + the reduction"),
    )


# ------------------------------------------------------------------ moving windows

#: The matrix of the moving windows in the full bench (16 MiB of float32) and with
#: --quick; any other bench shape (a, b, c) gives (a * b, c).
MOVING_FULL_SHAPE = (1024, 4096)
MOVING_QUICK_SHAPE = (256, 1024)


def moving_matrix_shape(shape: tuple[int, ...], window: int) -> tuple[int, int]:
    """The matrix for the bench's *shape*: :data:`MOVING_FULL_SHAPE`,
    :data:`MOVING_QUICK_SHAPE`, else ``(a * b, c)`` with rows of at least twice the
    window (every peer refuses a window longer than the axis)."""
    shape = tuple(shape)
    if shape == FULL_SHAPE:
        return MOVING_FULL_SHAPE
    if shape == QUICK_SHAPE:
        return MOVING_QUICK_SHAPE
    return (shape[0] * shape[1], max(shape[-1], 2 * window))


def numpy_moving(x: np.ndarray, op: str, window: int) -> np.ndarray:
    """The trailing moving window along the last axis in NumPy: the first
    ``window - 1`` positions NaN, the others a ``sliding_window_view`` reduction
    (the standard deviation with ``ddof=1``, as the bench's)."""
    from numpy.lib.stride_tricks import sliding_window_view

    windows = sliding_window_view(x, window, axis=-1)
    if op == "moving_std":
        reduced = np.std(windows, axis=-1, ddof=1)
    else:
        reduced = np.max(windows, axis=-1) if op == "moving_max" else (
            np.mean(windows, axis=-1) if op == "moving_mean" else np.sum(windows, axis=-1))
    out = np.full(x.shape, np.nan, x.dtype)
    out[:, window - 1:] = reduced
    return out


def moving_workload(op: str, window: int) -> Workload:
    """``op(x, window)`` along the rows of a float32 matrix (no NaN: every window full)."""
    short = op.removeprefix("moving_")

    def setup(shape, rng):
        return (rng.random(moving_matrix_shape(shape, window), dtype=np.float32),)

    # the standard deviation with ddof=1 everywhere: numbagg's move_std has no other
    ddof = {"ddof": 1} if op == "moving_std" else {}

    def axisops_factory(x):
        fn = _axisops_fn(op)
        return lambda: fn(x, window, **ddof)

    def numpy_factory(x):
        return lambda: numpy_moving(x, op, window)

    def bottleneck_factory(x):
        fn = getattr(_bottleneck(), f"move_{short}")
        return lambda: fn(x, window, axis=-1, **ddof)

    def numbagg_factory(x):
        fn = getattr(_numbagg(), f"move_{short}", None)
        if fn is None:
            raise NotImplementedError(f"numbagg has no move_{short}")
        return lambda: fn(x, window=window, axis=-1)

    def pandas_factory(x):
        import pandas

        frame = pandas.DataFrame(x.T)  # the rows as columns, as a time series would be
        return lambda: getattr(frame.rolling(window), short)(**ddof).to_numpy().T

    return Workload(
        name=f"{op} window={window}",
        op=op,
        setup=setup,
        systems={"axisops": axisops_factory, "numpy": numpy_factory,
                 "bottleneck": bottleneck_factory, "numbagg": numbagg_factory,
                 "pandas": pandas_factory},
        check=_moving_check,
        note=(f"trailing windows of {window} along the rows of a float32 matrix "
              f"{MOVING_FULL_SHAPE} in the full bench, {MOVING_QUICK_SHAPE} with --quick; "
              "pandas: rolling along the columns of a DataFrame of the transposed matrix "
              "(result transposed back, a view); NumPy: sliding_window_view"),
    )


def _moving_check(result, expected) -> bool:
    """NaN where NaN; values to float32 rounding of a window's sum."""
    result, expected = np.asarray(result), np.asarray(expected)
    if result.shape != expected.shape:
        return False
    return bool(np.allclose(result, expected, rtol=2e-4, atol=2e-5, equal_nan=True))
