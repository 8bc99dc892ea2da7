"""Complex arrays as pairs of real ones.

A sum, a mean, a cumulative sum, a move of elements (every gather, ``scatter``
without a reduction, ``unfold``) and a sum of moved elements (``scatter`` add,
``fold``) act on the real and imaginary parts separately: complex addition is
the addition of the parts, in the same order. So the families run their real
kernels on the two parts — ``x.real`` and ``x.imag`` are strided views, no copy —
and :func:`combine` puts the results together: the same bits as a complex
accumulation in the same order, with every kernel, plan and thread split of the
real path. Products are not componentwise: the families use NumPy's own complex
loops for them (in index order, NumPy's bits).

>>> import numpy as np
>>> z = np.array([1 + 2j, 3 - 1j])
>>> re, im = parts(z)
>>> combine(re * 2, im * 2)
array([2.+4.j, 6.-2.j])
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

#: The complex dtype whose parts are each real dtype.
_COMPLEX_OF: dict[np.dtype, np.dtype] = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}


def is_complex(dtype: Any) -> bool:
    return dtype is not None and np.dtype(dtype).kind == "c"


def check(dtype: np.dtype, op: str) -> None:
    """complex64 and complex128 only (their parts are float32 and float64)."""
    if np.dtype(dtype) not in _COMPLEX_OF.values():
        raise TypeError(f"{op}: unsupported dtype {np.dtype(dtype)} (complex64 and complex128 "
                        "are the complex dtypes axisops takes)")


def part_dtype(dtype: np.dtype) -> np.dtype:
    """The real dtype of a complex dtype's parts (complex64: float32)."""
    return np.dtype(np.dtype(dtype).char.lower())


def parts(x: Any) -> tuple[np.ndarray, np.ndarray]:
    """The real and imaginary parts of *x* (views of a complex array; for a real
    array, itself and zeros)."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return x.real, x.imag
    return x, np.zeros_like(x)


def combine(re: Any, im: Any) -> Any:
    """One complex array (or NumPy scalar) from its parts' results."""
    re, im = np.asarray(re), np.asarray(im)
    out = np.empty(re.shape, _COMPLEX_OF[re.dtype])
    out.real = re
    out.imag = im
    return out[()] if out.ndim == 0 else out


def componentwise(run, x: np.ndarray, *complex_args: Any) -> Any:
    """``run`` on the real parts, then on the imaginary parts, combined; each of
    *complex_args* (updates, a fill value) is split the same way."""
    splits = [_split(a) for a in complex_args]
    re = run(x.real, *(s[0] for s in splits))
    im = run(x.imag, *(s[1] for s in splits))
    return combine(re, im)


def result_dtype(op: str, x_dtype: Any, dtype: Any) -> np.dtype:
    """The result dtype of a complex sum, prod, mean, cumsum or cumprod (NumPy's
    rule), checked: complex64/complex128 only, and never a real ``dtype=`` for a
    complex input (see :func:`check_part_dtype`)."""
    probe = getattr(np, op)  # np.sum, np.prod, np.mean, np.cumsum, np.cumprod
    with warnings.catch_warnings():  # NumPy's ComplexWarning for a real dtype=, refused below
        warnings.simplefilter("ignore")
        res = np.dtype(probe(np.zeros(1, x_dtype), dtype=dtype).dtype)
    check_part_dtype(res, op)
    check(res, op)
    return res


def _split(value: Any) -> tuple[Any, Any]:
    """An argument's parts: arrays stay arrays, scalars stay scalars."""
    if np.ndim(value) == 0 and not isinstance(value, np.ndarray):
        z = complex(value)
        return (type(value)(z.real) if not isinstance(value, complex) else z.real), z.imag
    return parts(value)


def check_part_dtype(res: np.dtype, op: str) -> None:
    """Complex results come from complex inputs: a real ``dtype=`` for a complex
    input would drop the imaginary part (NumPy warns and drops it; we refuse)."""
    if res.kind != "c":
        raise TypeError(f"{op}: dtype={res} for a complex input would discard its imaginary "
                        "part; take .real first or give a complex dtype")
