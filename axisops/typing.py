"""Type aliases of axisops' public signatures, for annotations in user code.

>>> from axisops.typing import Axis
>>> def total(x, axis: Axis = None): ...

Arrays come in as anything NumPy accepts (``numpy.typing.ArrayLike``) and go out
as NumPy arrays; reductions over every axis give a NumPy scalar, as NumPy's do.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Union

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

__all__ = ["Array", "ArrayLike", "ArrayOrScalar", "Axis", "DTypeLike", "GatherMode",
           "Padding", "ScatterReduce", "Shape", "Size"]

#: A NumPy array of any dtype.
Array = np.ndarray
#: What a reduction returns: an array, or a NumPy scalar where NumPy gives one.
ArrayOrScalar = Union[np.ndarray, np.generic]  # noqa: UP007 (a runtime alias on 3.10)
#: The axes of a reduction: one axis, several, or ``None`` for every axis.
Axis = Union[int, tuple[int, ...], None]  # noqa: UP007
#: An array shape.
Shape = Sequence[int]
#: A window size, dilation, padding or stride: one int for every spatial
#: dimension, or one per dimension.
Size = Union[int, Sequence[int]]  # noqa: UP007
#: Padding: an int for every spatial dimension, one per dimension, or one
#: ``(begin, end)`` pair per dimension (ONNX pads).
Padding = Union[int, Sequence[int], Sequence[tuple[int, int]]]  # noqa: UP007
#: What a gather does with an index outside ``[-n, n)``.
GatherMode = Literal["raise", "wrap", "clip", "fill"]
#: How ``scatter`` combines an update with what is there: ``None`` overwrites.
ScatterReduce = Literal["add", "mul", "max", "min", None]
