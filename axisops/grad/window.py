"""Gradients of the sliding windows: unfold (a fold) and fold (an unfold).

See :mod:`axisops.grad` for the conventions every gradient follows.

Dates, durations, bytes, str and structured values have no derivative: ``g`` of such
a dtype is a ``TypeError`` (``unfold`` moves them, ``fold`` adds durations; their
gradients are of numbers only).
"""


from __future__ import annotations

import numpy as np

from .. import _complex
from .. import window as _window
from .._dispatch import dispatched
from ..typing import Array, ArrayLike, Padding, Shape, Size
from ._common import _gather_g, _is_complex, _shape

__all__ = ['unfold', 'fold']


@dispatched
def unfold(g: ArrayLike, x_shape: Shape, kernel_size: Size, dilation: Size = 1,
           padding: Padding = 0, stride: Size = 1, channels_last: bool = False) -> Array:
    """Gradient of :func:`axisops.unfold`: a :func:`axisops.fold` of ``g`` into ``x_shape``.

    Every element of ``x`` gets the sum of ``g`` over the window positions that read
    it (in increasing kernel index, deterministic); padding gets nothing.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.unfold(x, kernel_size, ...)``, of that result's shape:
        ``(N, C*K, L)``, or ``(N, L, K*C)`` with ``channels_last``, without
        ``N`` for an unbatched ``x`` (``K = prod(kernel_size)``, ``L`` the
        number of window positions); a bool, integer or float dtype.
    x_shape : tuple of ints
        Shape of the forward's input ``x``: ``(N, C, *spatial)`` or
        ``(C, *spatial)``; with ``channels_last`` ``(N, *spatial, C)`` or
        ``(*spatial, C)``.
    kernel_size : int or tuple of ints
        The forward's window size: 1 to 3 entries, one per spatial dimension;
        an int ``k`` means ``(k, k)``.
    dilation : int or tuple of ints, optional
        The forward's spacing of the window's elements: an int for every
        spatial dimension, or one per dimension. Default 1.
    padding : int, tuple of ints or tuple of (begin, end) pairs, optional
        The forward's zero padding of every spatial dimension. Default 0.
    stride : int or tuple of ints, optional
        The forward's step between window positions. Default 1.
    channels_last : bool, optional
        Whether the forward's ``x`` had its channels last; must be the
        forward's. Default False.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``x``, of shape ``x_shape``, in ``g``'s
        dtype where that is a float dtype and in float64 otherwise.

    Raises
    ------
    ValueError
        If ``g``'s shape is not that of the forward's result; ``x_shape`` has
        neither ``d + 1`` nor ``d + 2`` dimensions for a kernel of ``d``
        spatial dimensions; the kernel does not fit in the padded input; or
        ``kernel_size``, ``dilation``, ``stride`` or ``padding`` has the wrong
        number of entries or an entry too small (``kernel_size``, ``dilation``
        and ``stride`` at least 1, ``padding`` at least 0).
    TypeError
        If ``kernel_size`` is not an int or a tuple of ints, or ``g``'s dtype is
        not bool, integer or float.

    See Also
    --------
    axisops.unfold : The forward operator.
    axisops.fold : The adjoint operation this gradient computes.
    axisops.grad.fold : The gradient of fold.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.unfold(np.ones((1, 4, 4)), (1, 1, 3, 3), 2)   # windows covering each
    array([[[[1., 2., 1.],
             [2., 4., 2.],
             [1., 2., 1.]]]])
    """
    if _is_complex(g):  # linear: the parts of g
        return _complex.componentwise(
            lambda part: unfold(part, x_shape, kernel_size, dilation, padding, stride,
                                channels_last), np.asarray(g))
    op = "grad.unfold"
    x_shape = _shape(x_shape)
    geo, expected = _window.unfold_shape(x_shape, kernel_size, dilation, padding, stride,
                                         channels_last, op=op)
    spatial = x_shape[-geo.d - 1:-1] if channels_last else x_shape[-geo.d:]
    g, dtype, _ = _gather_g(g, expected, op)
    out = _window.fold(g, spatial, kernel_size, dilation=dilation, padding=padding, stride=stride,
                       channels_last=channels_last)
    return out.astype(dtype, copy=False).reshape(x_shape)


@dispatched
def fold(g: ArrayLike, kernel_size: Size, dilation: Size = 1, padding: Padding = 0,
         stride: Size = 1, channels_last: bool = False) -> Array:
    """Gradient of :func:`axisops.fold`: an :func:`axisops.unfold` of ``g`` (fold's output shape).

    Each column entry of the forward's input gets the gradient of the element of
    the result it was added to; entries that fell on padding get 0. The
    forward's ``output_size`` is ``g``'s spatial shape, so it is not passed.

    Parameters
    ----------
    g : array_like
        Gradient of the loss with respect to the result of
        ``axisops.fold(cols, output_size, kernel_size, ...)``, of that result's
        shape: ``(N, C, *output_size)``, or ``(N, *output_size, C)`` with
        ``channels_last``, without ``N`` if unbatched; a bool, integer or float
        dtype.
    kernel_size : int or tuple of ints
        The forward's window size: 1 to 3 entries, one per spatial dimension;
        an int ``k`` means ``(k, k)``.
    dilation : int or tuple of ints, optional
        The forward's spacing of the window's elements: an int for every
        spatial dimension, or one per dimension. Default 1.
    padding : int, tuple of ints or tuple of (begin, end) pairs, optional
        The forward's zero padding of every spatial dimension. Default 0.
    stride : int or tuple of ints, optional
        The forward's step between window positions. Default 1.
    channels_last : bool, optional
        Whether the forward's layout was channels last; must be the forward's.
        Default False.

    Returns
    -------
    numpy.ndarray
        The gradient with respect to ``cols``, of its shape: ``(N, C*K, L)``,
        or ``(N, L, K*C)`` with ``channels_last``, without ``N`` if unbatched;
        in ``g``'s dtype where that is a float dtype and in float64 otherwise.

    Raises
    ------
    ValueError
        If ``g`` has neither ``d + 1`` nor ``d + 2`` dimensions for a kernel of
        ``d`` spatial dimensions; the kernel does not fit in the padded ``g``;
        or ``kernel_size``, ``dilation``, ``stride`` or ``padding`` has the
        wrong number of entries or an entry too small (``kernel_size``,
        ``dilation`` and ``stride`` at least 1, ``padding`` at least 0).
    TypeError
        If ``kernel_size`` is not an int or a tuple of ints, or ``g``'s dtype is
        not bool, integer or float.

    See Also
    --------
    axisops.fold : The forward operator.
    axisops.unfold : The adjoint operation this gradient computes.
    axisops.grad.unfold : The gradient of unfold.

    Examples
    --------
    >>> import numpy as np
    >>> import axisops
    >>> axisops.grad.fold(np.arange(4.).reshape(1, 2, 2), (2, 1))   # unbatched, C=1, 2 windows
    array([[0., 1.],
           [2., 3.]])
    >>> axisops.grad.fold(np.arange(9.).reshape(1, 3, 3), 2)   # each column: one 2x2 window
    array([[0., 1., 3., 4.],
           [1., 2., 4., 5.],
           [3., 4., 6., 7.],
           [4., 5., 7., 8.]])
    """
    if _is_complex(g):  # linear: the parts of g
        return _complex.componentwise(
            lambda part: fold(part, kernel_size, dilation, padding, stride, channels_last),
            np.asarray(g))
    g = np.asarray(g)
    if g.dtype.kind not in "biuf":
        raise TypeError(f"grad.fold: unsupported dtype {g.dtype} for g")
    dtype = g.dtype if g.dtype.kind == "f" else np.dtype(np.float64)
    return _window._unfold("grad.fold", g.astype(dtype, copy=False), kernel_size, dilation,
                           padding, stride, channels_last)
