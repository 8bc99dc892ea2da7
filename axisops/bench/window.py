"""The sliding-window workloads (unfold and fold of a convolution's image)."""
from __future__ import annotations

import numpy as np

from .onnx import onnx_runner
from .systems import FULL_SHAPE, QUICK_SHAPE, _torch
from .workload import Workload, _axisops_fn, exact_check, float32_sum_check

# Sliding windows.  A convolution's im2col and col2im: float32 images with
# 3x3 windows, padding 1, stride 1, so there are as many windows as pixels.  These
# workloads have their own 4-D shapes, not the bench's 3-D ``shape``:
# :func:`window_image_shape` maps the full and the --quick shape to a typical
# feature map, and any other shape (tests, --shape) to a small image.

#: The image ``(N, C, H, W)`` of the window workloads in the full bench: a ResNet
#: stage-2 feature map (6.1 MiB float32; 9 times that unfolded).
WINDOW_FULL_SHAPE = (8, 64, 56, 56)
#: The image with ``--quick``.
WINDOW_QUICK_SHAPE = (2, 32, 28, 28)
#: The window: kernel, padding, stride.
WINDOW_KERNEL, WINDOW_PADDING = 3, 1

_WINDOW_SHAPES_TEXT = (f"float32 x of {WINDOW_FULL_SHAPE} in the full bench, "
                       f"{WINDOW_QUICK_SHAPE} with --quick")


def window_image_shape(shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """The image ``(N, C, H, W)`` that the window workloads use for the bench's ``shape``.

    :data:`FULL_SHAPE` gives :data:`WINDOW_FULL_SHAPE`, :data:`QUICK_SHAPE` gives
    :data:`WINDOW_QUICK_SHAPE`, and any other ``(a, b, c)`` (tests, ``--shape``)
    gives ``(a, b, c, c)``.
    """
    shape = tuple(shape)
    if shape == FULL_SHAPE:
        return WINDOW_FULL_SHAPE
    if shape == QUICK_SHAPE:
        return WINDOW_QUICK_SHAPE
    n, c, h = shape[:3]
    return (n, c, h, h)


def numpy_unfold(x: np.ndarray, k: int, p: int, channels_last: bool = False) -> np.ndarray:
    """im2col in NumPy (stride 1): ``np.pad``, ``sliding_window_view`` and one copy.

    ``x`` ``(N, C, H, W)`` gives ``(N, C*k*k, L)`` in PyTorch's order (row
    ``c*k*k + kernel offset``); ``channels_last`` takes ``(N, H, W, C)`` and gives
    ``(N, L, k*k*C)`` (column ``kernel offset*C + c``).
    """
    from numpy.lib.stride_tricks import sliding_window_view

    if channels_last:
        n, c = x.shape[0], x.shape[3]
        padded = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)))
        windows = sliding_window_view(padded, (k, k), axis=(1, 2))  # (N, Ho, Wo, C, k, k)
        ho, wo = windows.shape[1:3]
        return windows.transpose(0, 1, 2, 4, 5, 3).reshape(n, ho * wo, k * k * c)
    n, c = x.shape[:2]
    padded = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    windows = sliding_window_view(padded, (k, k), axis=(2, 3))  # (N, C, Ho, Wo, k, k)
    ho, wo = windows.shape[2:4]
    return windows.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * k * k, ho * wo)


def numpy_fold(cols: np.ndarray, size: tuple[int, int], k: int, p: int) -> np.ndarray:
    """col2im in NumPy (stride 1): one vectorised add of a shifted slice per kernel offset.

    ``cols`` ``(N, C*k*k, L)`` is summed into a zero-padded ``(N, C, H+2p, W+2p)``
    buffer in increasing kernel offset, and the inside copied out.
    """
    h, w = size
    ho, wo = h + 2 * p - k + 1, w + 2 * p - k + 1
    n = cols.shape[0]
    c = cols.shape[1] // (k * k)
    blocks = cols.reshape(n, c, k, k, ho, wo)
    padded = np.zeros((n, c, h + 2 * p, w + 2 * p), dtype=cols.dtype)
    for i in range(k):
        for j in range(k):
            padded[:, :, i:i + ho, j:j + wo] += blocks[:, :, i, j]
    return np.ascontiguousarray(padded[:, :, p:p + h, p:p + w])


def unfold_workload(channels_last: bool = False) -> Workload:
    """``unfold(x, 3, padding=1)``: 3x3 im2col of a float32 image (see :func:`window_image_shape`).

    Peers: NumPy (:func:`numpy_unfold`: ``np.pad``, ``sliding_window_view``, a
    reshape that copies) and ``torch.nn.functional.unfold``; ONNX has no unfold
    operator.  ``channels_last``: ``x`` is ``(N, H, W, C)`` and the result
    ``(N, L, 9*C)``; torch unfolds the permuted ``(N, C, H, W)`` view and
    permutes its result into that layout (a copy, timed).
    """
    k, p = WINDOW_KERNEL, WINDOW_PADDING

    def setup(shape, rng):
        n, c, h, w = window_image_shape(shape)
        return (rng.random((n, h, w, c) if channels_last else (n, c, h, w), dtype=np.float32),)

    def axisops_factory(x):
        fn = _axisops_fn("unfold")
        return lambda: fn(x, (k, k), padding=p, channels_last=channels_last)

    def numpy_factory(x):
        return lambda: numpy_unfold(x, k, p, channels_last)

    def torch_factory(x):
        torch = _torch()
        unfold = torch.nn.functional.unfold
        t = torch.from_numpy(x)
        if not channels_last:
            return lambda: unfold(t, k, padding=p)
        n, _, _, c = x.shape
        nchw = t.permute(0, 3, 1, 2)  # a view: (N, C, H, W) in channels_last memory

        def run():
            cols = unfold(nchw, k, padding=p)  # (N, C*k*k, L)
            return cols.reshape(n, c, k * k, -1).permute(0, 3, 2, 1).reshape(n, -1, k * k * c)

        return run

    if channels_last:
        note = (f"{_WINDOW_SHAPES_TEXT}, in (N, H, W, C) layout; result (N, L, 9*C); "
                "NumPy: np.pad + sliding_window_view + a copying reshape; torch: "
                "F.unfold of the permuted view, then permute + contiguous (timed); "
                "ONNX has no unfold")
    else:
        note = (f"{_WINDOW_SHAPES_TEXT}; result (N, 9*C, L); NumPy: np.pad + "
                "sliding_window_view + a copying reshape; torch: F.unfold; ONNX has no unfold")
    return Workload(
        name="unfold 3x3 channels_last" if channels_last else "unfold 3x3",
        op="unfold",
        setup=setup,
        systems={"axisops": axisops_factory, "numpy": numpy_factory, "torch": torch_factory},
        check=exact_check,
        note=note,
    )


def fold_workload() -> Workload:
    """``fold(cols, (H, W), 3, padding=1)``: 3x3 col2im back to a float32 image.

    ``cols`` is the unfold of a random image (:func:`numpy_unfold`, in setup:
    ``(8, 576, 3136)`` in the full bench).  Peers: NumPy (:func:`numpy_fold`),
    ``torch.nn.functional.fold``, ONNX Runtime's Col2Im (``cols`` fed on every
    run; ``image_shape`` and ``block_shape`` constants).  Each pixel sums up to 9
    terms, in each system's own order: checked to a float32 tolerance
    (:func:`float32_sum_check`).
    """
    k, p = WINDOW_KERNEL, WINDOW_PADDING

    def setup(shape, rng):
        n, c, h, w = window_image_shape(shape)
        cols = numpy_unfold(rng.random((n, c, h, w), dtype=np.float32), k, p)
        return cols, np.array([h, w], dtype=np.int64)

    def axisops_factory(cols, size):
        fn = _axisops_fn("fold")
        size = tuple(int(s) for s in size)
        return lambda: fn(cols, size, (k, k), padding=p)

    def numpy_factory(cols, size):
        size = tuple(int(s) for s in size)
        return lambda: numpy_fold(cols, size, k, p)

    def torch_factory(cols, size):
        torch = _torch()
        fold = torch.nn.functional.fold
        t, size = torch.from_numpy(cols), tuple(int(s) for s in size)
        return lambda: fold(t, size, k, padding=p)

    def onnx_factory(cols, size):
        return onnx_runner("Col2Im", cols, out_dtype=cols.dtype, out_rank=4,
                           attributes={"pads": [p] * 4},
                           constants=[size, np.array([k, k], dtype=np.int64)], opset=18)

    n, c, h, w = WINDOW_FULL_SHAPE
    return Workload(
        name="fold 3x3",
        bytes_read=lambda inputs: inputs[0].nbytes,  # cols (the size is two int64s)
        op="fold",
        setup=setup,
        systems={"axisops": axisops_factory, "numpy": numpy_factory,
                 "torch": torch_factory, "onnxruntime": onnx_factory},
        check=float32_sum_check,
        note=(f"cols = the 3x3 unfold of a float32 image of {WINDOW_FULL_SHAPE} "
              f"(cols {n}x{c * k * k}x{h * w}) in the full bench, {WINDOW_QUICK_SHAPE} with "
              "--quick; result (N, C, H, W); NumPy: 9 shifted-slice adds into a padded buffer; "
              "torch: F.fold; ONNX Runtime: Col2Im; sums in each system's own order, checked "
              "to rtol 1e-5"),
    )


#: The benchmark workloads, in table order.
