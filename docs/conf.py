"""Sphinx configuration of the axisops documentation.

Build: ``pip install -e ".[docs]"`` then
``sphinx-build -W --keep-going -b html docs docs/_build/html`` (CI runs exactly this).
Pages are MyST Markdown; the API pages are generated from the numpydoc docstrings.
Nothing here reaches the network, so the build is the same offline.
"""
import axisops

project = "axisops"
author = "the axisops developers"
copyright = "2026, the axisops developers"
release = axisops.__version__
version = release

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
# README-style heading links (contract.md#accuracy-and-...) resolve inside the site
myst_heading_anchors = 3

# API pages: one per function, written at build time into docs/generated (not in git)
autosummary_generate = True
autodoc_typehints = "signature"
autodoc_type_aliases = {name: f"axisops.typing.{name}" for name in axisops.typing.__all__}
numpydoc_show_class_members = False
numpydoc_xref_param_type = False

html_theme = "pydata_sphinx_theme"
html_title = f"axisops {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path: list[str] = []

# Every documented function lists every parameter and what it returns; the build
# (run with -W in CI) fails otherwise. A NamedTuple's fields are its Attributes.
numpydoc_validation_checks = {"PR01", "PR02", "RT01"}
numpydoc_validation_exclude = {r"\.ValuesIndices(\.|$)"}
