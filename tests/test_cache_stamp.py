"""The on-disk cache stamp of the package's compiled functions (``axisops._cache_stamp``):
a function's cache files are stale when a module it imports changes, not only its own."""
import os

import axisops._cache_stamp as S
from axisops.kernels import moving_entry


def _file(relative: str) -> str:
    return os.path.join(S._PACKAGE, *relative.split("/"))


def test_dependencies_follow_relative_imports_through_modules():
    deps = S.dependencies(_file("kernels/moving_entry.py"))
    for needed in ("kernels/moving_entry.py", "kernels/moving.py", "kernels/common.py",
                   "kernels/entry.py", "kernels/simd.py", "_jit.py"):
        assert _file(needed) in deps, needed
    # not the package's __init__ (which imports every module), nor an unrelated family
    assert _file("__init__.py") not in deps and _file("kernels/order.py") not in deps


def test_a_dependency_changed_changes_the_stamp(monkeypatch):
    path = _file("kernels/moving_entry.py")
    before = S.stamp(path)
    assert before == S.stamp(path)  # stable
    digest = S._digest
    moving = _file("kernels/moving.py")
    monkeypatch.setattr(S, "_digest", lambda p, m, s: b"edited" if p == moving else digest(p, m, s))
    assert S.stamp(path) != before
    order = _file("kernels/order.py")  # not imported by it: no change
    monkeypatch.setattr(S, "_digest", lambda p, m, s: b"edited" if p == order else digest(p, m, s))
    assert S.stamp(path) == before


def test_the_package_functions_use_the_stamping_locator():
    cache = moving_entry.moving_extreme_rows._cache
    locator = cache._impl.locator
    # a cache directory the user set (NUMBA_CACHE_DIR) comes first; else the package's
    # folder, which may be read-only (an installed copy): Numba's user-wide locator
    # then takes the function, stamped by its file alone
    if os.environ.get("NUMBA_CACHE_DIR"):
        stamped: type | None = S.PackageUserDirLocator
    elif os.access(os.path.dirname(moving_entry.__file__), os.W_OK):
        stamped = S.PackageCacheLocator
    else:
        stamped = None
    if stamped is not None:
        assert isinstance(locator, stamped)
        assert cache._cache_file._source_stamp == S.stamp(os.path.abspath(moving_entry.__file__))
