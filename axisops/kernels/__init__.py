"""Numba loops only: no validation, no allocation policy, no NumPy fallbacks.

Every kernel reads a flat read-only base buffer through element offsets and
strides (see ``axisops._layout``) and trusts its arguments completely: the public
function above it has checked every index and shape.
"""
