"""The public API's shape: every public function is fully type-hinted, the hints
resolve, and the package ships ``py.typed`` (mypy checks the hints themselves
against ``tests/typing/public_api.py`` in CI)."""
import inspect
import pathlib
import typing

import pytest

import axisops

PUBLIC = [getattr(axisops, n) for n in axisops.__all__ if inspect.isfunction(getattr(axisops, n))]
GRADIENTS = [f for n, f in vars(axisops.grad).items()
             if inspect.isfunction(f) and not n.startswith("_") and f.__module__ == "axisops.grad"]


def test_the_lists_are_what_the_contract_names():
    names = {f.__name__ for f in PUBLIC}
    assert {"sum", "argmax", "unravel", "cummax", "take_along_axis", "scatter", "unfold", "fold",
            "thread_limit", "pool_limit"} <= names
    assert len(PUBLIC) == 59
    assert {f.__name__ for f in GRADIENTS} == {
        "sum", "mean", "prod", "max", "min", "cumsum", "cumprod", "cummax", "cummin",
        "logcumsumexp", "take", "take_along_axis", "gather_nd", "scatter", "unfold", "fold",
        "nansum", "nanmean", "nanprod", "nanmax", "nanmin", "nancumsum", "nancumprod", "var",
        "std", "nanvar", "nanstd", "max_pool", "avg_pool", "moving_sum", "moving_mean",
        "moving_var", "moving_std", "moving_max", "moving_min", "sort", "top_k", "kthvalue",
        "partition", "median", "nanmedian", "quantile", "nanquantile", "moving_median",
        "moving_quantile"}


@pytest.mark.parametrize("func", PUBLIC + GRADIENTS, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_every_parameter_and_the_result_are_hinted(func):
    hints = typing.get_type_hints(func)  # raises if a hint does not resolve
    params = inspect.signature(func).parameters
    missing = [p for p in params if p not in hints]
    assert missing == [], f"{func.__name__}: no hint for {missing}"
    assert "return" in hints, f"{func.__name__}: no return hint"


def test_the_package_says_it_is_typed():
    assert (pathlib.Path(axisops.__file__).parent / "py.typed").is_file()
