"""The moves of every fixed-width dtype (bytes, str, void, structured, dates) against
NumPy: take (every mode), take_along_axis, gather_nd, scatter with ``reduce=None``
and unfold, on several layouts, and lazily on dask arrays. Widths 1, 3, 5, 8, 12,
16 and 24 bytes: 1, 2 and 4 bytes move as one unsigned integer, the others as a
row of lanes (``axisops.gather.lanes``)."""
from __future__ import annotations

import numpy as np
import pytest

import axisops

STRUCT = np.dtype([("a", "i4"), ("b", "S8"), ("c", "f4"), ("d", "i8")])  # 24 bytes
DTYPES = [np.dtype(d) for d in ("S1", "S3", "S5", "S8", "U3", "S16", "V7", "M8[ns]", "m8[s]")]
DTYPES.append(STRUCT)
IDS = [str(d) if d.fields is None else "struct24" for d in DTYPES]


def values(dtype, shape, seed=0):
    """Random bytes seen as *dtype* (every bit pattern a value: NaT, odd strings)."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=(*shape, dtype.itemsize), dtype=np.uint8)
    return np.ascontiguousarray(raw).view(dtype)[..., 0]


def layouts(x):
    """C order, transposed, reversed and strided, read-only."""
    ro = x.copy()
    ro.flags.writeable = False
    return [x, x.T, x[::-1, ::2], np.swapaxes(x, 0, 2)[:, ::-1], ro]


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype,
                                                                 got.shape, want.shape)
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


def scatter_reference(x, indices, updates, axis):
    """x with updates written in C order of the indices (the last write wins)."""
    out = np.array(x, copy=True)
    for p in np.ndindex(*indices.shape):
        dest = list(p)
        dest[axis] = indices[p]
        out[tuple(dest)] = updates[p]
    return out


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_take_every_mode(dtype):
    rng = np.random.default_rng(1)
    for x in layouts(values(dtype, (5, 6, 4))):
        for axis in (None, 0, 1, -1):
            n = x.size if axis is None else x.shape[axis]
            inside = rng.integers(-n, n, size=(3, 2))
            same(axisops.take(x, inside, axis), np.take(x, inside, axis))
            wild = rng.integers(-3 * n, 3 * n, size=(7,))
            for mode in ("wrap", "clip"):
                same(axisops.take(x, wild, axis, mode=mode), np.take(x, wild, axis, mode=mode))
            fill = x.reshape(-1)[3]
            want = np.take(x, np.clip(wild, -n, n - 1), axis)
            outside = (wild < -n) | (wild >= n)
            where = (slice(None),) * (0 if axis is None else axis % 3) + (outside,)
            want[where] = fill
            same(axisops.take(x, wild, axis, mode="fill", fill_value=fill), want)
            zero = axisops.take(x, wild, axis, mode="fill")  # 0: zero bits
            assert zero[where].tobytes() == bytes(zero[where].nbytes)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_take_along_axis_and_gather_nd(dtype):
    rng = np.random.default_rng(2)
    for x in layouts(values(dtype, (5, 6, 4), seed=3)):
        for axis in (0, 1, 2):
            n = x.shape[axis]
            shape = list(x.shape)
            shape[axis] = 7
            i = rng.integers(-n, n, size=shape)
            same(axisops.take_along_axis(x, i, axis), np.take_along_axis(x, i, axis))
            b = i[:1] if axis else i[:, :1]  # broadcast along a dimension
            same(axisops.take_along_axis(x, b, axis), np.take_along_axis(x, b, axis))
            wild = i * 3
            fill = x.reshape(-1)[0]
            want = np.take_along_axis(x, np.clip(wild, -n, n - 1), axis)
            want[(wild < -n) | (wild >= n)] = fill
            same(axisops.take_along_axis(x, wild, axis, mode="fill", fill_value=fill), want)
        flat = rng.integers(-x.size, x.size, size=9)
        same(axisops.take_along_axis(x, flat, None), np.take(x, flat))
        t = rng.integers(-99, 99, size=(3, 2, 2)) % np.array(x.shape[:2])
        t[0, 0] -= np.array(x.shape[:2])  # negative ones too
        same(axisops.gather_nd(x, t), x[t[..., 0], t[..., 1]])
        same(axisops.gather_nd(x, t[..., :1]), x[t[..., 0]])
        bt = rng.integers(0, x.shape[1], size=(x.shape[0], 3, 1))
        same(axisops.gather_nd(x, bt, batch_dims=1),
             x[np.arange(x.shape[0])[:, None], bt[..., 0]])


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_scatter_moves(dtype):
    rng = np.random.default_rng(4)
    for x in layouts(values(dtype, (5, 6, 4), seed=5)):
        for axis in (0, 1, 2):
            shape = list(x.shape)
            shape[axis] = 3
            i = rng.integers(-x.shape[axis], x.shape[axis], size=shape)  # repeats: last wins
            u = values(dtype, tuple(shape), seed=6)
            same(axisops.scatter(x, i, u, axis), scatter_reference(x, i, u, axis))
            one = u.reshape(-1)[0]  # a scalar update, broadcast
            same(axisops.scatter(x, i, one, axis),
                 scatter_reference(x, i, np.broadcast_to(one, i.shape), axis))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_unfold(dtype):
    """Against the unfold of the positions (1-based, 0 for padding) read from x."""
    for cl in (False, True):
        for kernel, options in (((2, 3), dict(padding=1, stride=(2, 1))),
                                ((3,), dict(dilation=2, padding=[(2, 1)])),
                                ((2, 1, 2), dict(padding=(1, 0, 1)))):
            d = len(kernel)
            shape = (2, 3, *(5,) * d) if not cl else (2, *(5,) * d, 3)
            x = values(dtype, shape, seed=7)
            for v in (x, x[::-1, ..., ::-1], x[0]):
                where = np.arange(1, v.size + 1).reshape(v.shape)
                at = axisops.unfold(where, kernel, channels_last=cl, **options)
                table = np.concatenate([np.zeros(1, v.dtype), v.reshape(-1)])
                same(axisops.unfold(v, kernel, channels_last=cl, **options), table[at])


def test_fold_adds_durations_and_refuses_the_rest():
    t = (np.arange(2 * 12 * 9).reshape(2, 12, 9) - 100).astype("m8[s]")
    t[0, 0, 0] = np.timedelta64("NaT")
    got = axisops.fold(t, (4, 5), (2, 3))
    b = t.view(np.int64)
    total = axisops.fold(np.where(np.isnat(t), 0, b), (4, 5), (2, 3))
    nat = axisops.fold(np.isnat(t), (4, 5), (2, 3))
    assert got.dtype == t.dtype and nat.any()
    same(got, np.where(nat, np.iinfo(np.int64).min, total).view(t.dtype))
    for dtype in ("M8[s]", "S3", "S8", STRUCT):
        with pytest.raises(TypeError, match="fold: unsupported dtype"):
            axisops.fold(np.zeros((2, 12, 9), dtype), (4, 5), (2, 3))


def test_errors_are_the_numbers_errors():
    x = values(np.dtype("S3"), (2, 3))
    n = np.arange(6).reshape(2, 3)
    calls = [
        lambda a: axisops.take(a, [0, 3], 1),
        lambda a: axisops.take(a, [0, -7], None),
        lambda a: axisops.take_along_axis(a, np.array([[0, 3]]), 1),
        lambda a: axisops.take_along_axis(a, np.array([0, 3]), 1),
        lambda a: axisops.take_along_axis(a, np.array([[0, 1]]), None),
        lambda a: axisops.take(a, [0], 2),
        lambda a: axisops.take(a, [0.5], 1),
        lambda a: axisops.take(a, [0], 1, mode="nope"),
        lambda a: axisops.gather_nd(a, [[0, 3]]),
        lambda a: axisops.gather_nd(a, [[0, 1, 1]]),
        lambda a: axisops.scatter(a, [[0, 3]], a[:1, :2], 1),
        lambda a: axisops.scatter(a, [[0, 1]], a[:1, :2], 2),
        lambda a: axisops.scatter(a, [0, 1], a[0, :2], 1),
        lambda a: axisops.scatter(a, [[0, 1]], a[:, :1], 1),
    ]
    for call in calls:
        outcomes = []
        for a in (x, n):
            try:
                call(a)
                outcomes.append(None)
            except Exception as exc:
                outcomes.append((type(exc), str(exc)))
        assert outcomes[0] is not None and outcomes[0] == outcomes[1], outcomes


def test_refusals():
    for x in (np.array([1, "a"], dtype=object),
              np.zeros(2, [("a", "O"), ("b", "i4")])):  # references are never moved
        with pytest.raises(TypeError, match="take: unsupported dtype"):
            axisops.take(x, [0])
        with pytest.raises(TypeError, match="scatter"):
            axisops.scatter(x, [0], x[:1], 0)
        with pytest.raises(TypeError, match="unfold"):
            axisops.unfold(x.reshape(1, 1, 2), (1,))
    x = values(np.dtype("S3"), (2, 3))
    with pytest.raises(TypeError, match="reduce='add'"):
        axisops.scatter(x, [[0]], x[:1, :1], 1, reduce="add")
    with pytest.raises(TypeError, match="fill_value"):
        axisops.take(x, [9], 1, mode="fill", fill_value=[b"a", b"b"])
    with pytest.raises(TypeError, match=r"grad\.take"):  # no derivative of bytes or dates
        axisops.grad.take(x[0, :1], [0], (3,))
    with pytest.raises(TypeError, match=r"grad\.fold"):
        axisops.grad.fold(np.zeros((1, 3, 3), "M8[s]"), 2)


def test_on_dask_lazily():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(8)
    for dtype in (np.dtype("S3"), np.dtype("U3"), STRUCT, np.dtype("M8[ns]")):
        x = values(dtype, (6, 9), seed=9)
        dx = da.from_array(x, chunks=(4, 4))
        i = rng.integers(-9, 9, size=(6, 5))
        di = da.from_array(i, chunks=(3, 2))
        fill = x[0, 0]
        cases = [
            (axisops.take(dx, di[0], 1), axisops.take(x, i[0], 1)),
            (axisops.take(dx, [1, 70], None, mode="fill", fill_value=fill),
             axisops.take(x, [1, 70], None, mode="fill", fill_value=fill)),
            (axisops.take_along_axis(dx, di, 1), np.take_along_axis(x, i, 1)),
            (axisops.take_along_axis(dx, di + 5, 1, mode="fill", fill_value=fill),
             axisops.take_along_axis(x, i + 5, 1, mode="fill", fill_value=fill)),
            (axisops.gather_nd(dx, [[1, 2], [0, -1]]), x[[1, 0], [2, -1]]),
            (axisops.scatter(dx, di[:, :3], x[:, :3], 1), scatter_reference(x, i[:, :3], x[:, :3], 1)),
            (axisops.unfold(dx.reshape(1, 6, 9), (2,), padding=1),
             axisops.unfold(x.reshape(1, 6, 9), (2,), padding=1)),
        ]
        for got, want in cases:
            assert isinstance(got, da.Array)
            same(got.compute(), want)
        with pytest.raises(IndexError, match=r"take_along_axis: index \d+ at position"):
            axisops.take_along_axis(dx, di + 9, 1).compute()
