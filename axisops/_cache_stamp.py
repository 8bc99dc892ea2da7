"""Numba's on-disk cache, invalidated when a module a compiled function uses changes.

Numba keys a cached function by the contents of its own source file only. A
kernel or entry that calls helpers of another module (``moving_entry`` calls
``moving``'s walks, every kernel calls ``simd``'s loops) inlines their machine code,
so after an edit of that other module its cache file still held the old code and
loaded it: a measurement of ``moving_argmax`` through its row entry ran code two
edits old (19 ms where the new code took 1.1), and a test can pass on the same
stale code. The locator here, first for files of this package, stamps a function
with the hashes of its own file and of every module of the package it imports,
directly or through them (``from .x import``, ``from ..kernels.x import``, read
from the sources), so such an edit recompiles it; a user's installed copy, whose
files never change, loads as before.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re

from numba.core import caching

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[\w \t,]+)",
                     re.MULTILINE)


def _module_file(package_dir: str, dots: str, name: str) -> str | None:
    """The file of the module ``from <dots><name> import`` names, seen from a module
    in *package_dir*; None when it is not a module of this package."""
    base = package_dir
    for _ in range(len(dots) - 1):
        base = os.path.dirname(base)
    path = os.path.join(base, *name.split(".")) if name else base
    # a package's __init__ is not followed: the package's own imports everything
    candidate = path + ".py"
    return candidate if os.path.isfile(candidate) and candidate.startswith(_PACKAGE) else None


@functools.cache
def _imports(path: str) -> tuple[str, ...]:
    """The files of this package that the module at *path* imports relatively
    (``from .x import y`` names ``x``, and ``y`` too where ``y`` is a module)."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    here = os.path.dirname(path)
    found = []
    for dots, name, names in _IMPORT.findall(source):
        module = _module_file(here, dots, name)
        if module is not None:
            found.append(module)
        for item in names.strip("()").replace("\n", " ").split(","):
            item = item.split(" as ")[0].strip()
            if item:
                sub = _module_file(here, dots, f"{name}.{item}" if name else item)
                if sub is not None:
                    found.append(sub)
    return tuple(sorted(set(found)))


def dependencies(path: str) -> tuple[str, ...]:
    """*path* and every file of this package it imports, directly or not."""
    seen = {path}
    todo = [path]
    while todo:
        for dep in _imports(todo.pop()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return tuple(sorted(seen))


@functools.cache
def _digest(path: str, mtime: float, size: int) -> bytes:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).digest()


def stamp(path: str) -> str:
    """One hash of the contents of *path* and of its dependencies."""
    h = hashlib.sha256()
    for dep in dependencies(path):
        st = os.stat(dep)
        h.update(dep[len(_PACKAGE):].encode())
        h.update(_digest(dep, st.st_mtime, st.st_size))
    return h.hexdigest()


class _Stamped:
    """A Numba cache locator of this package's files, stamped by :func:`stamp` (the
    file and its dependencies) instead of the file alone."""

    _py_file: str

    def get_source_stamp(self):
        return stamp(os.path.abspath(self._py_file))

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.abspath(py_file).startswith(_PACKAGE + os.sep):
            return None
        return super().from_function(py_func, py_file)


class PackageCacheLocator(_Stamped, caching.InTreeCacheLocator):
    """Numba's in-tree cache locator (``__pycache__`` beside the file), stamped."""


class PackageUserDirLocator(_Stamped, caching.UserProvidedCacheLocator):
    """Numba's locator of the cache directory a user set (``NUMBA_CACHE_DIR``),
    stamped: an edited helper module recompiles its dependents there too."""


def install() -> None:
    """Put the stamped locators before Numba's own: :class:`PackageUserDirLocator`
    where ``NUMBA_CACHE_DIR`` is set, else :class:`PackageCacheLocator` (where the
    package's folder cannot be written, Numba's user-wide locator takes over,
    stamped by the file alone)."""
    classes = caching.CacheImpl._locator_classes
    for ours, numbas in ((PackageUserDirLocator, caching.UserProvidedCacheLocator),
                         (PackageCacheLocator, caching.InTreeCacheLocator)):
        if ours not in classes:
            classes.insert(classes.index(numbas), ours)
