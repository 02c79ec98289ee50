"""Sphinx configuration of rffbench's documentation (``docs/``).

Build: ``pip install -e '.[docs]' && sphinx-build -W --keep-going -b html docs docs/_build/html``
(warnings are errors; CI builds it).  Pages are Markdown (MyST); the API reference is
autodoc of the docstrings, which are reStructuredText with Sphinx roles; the configuration
reference is generated from the config schema at build time (``_generated/``, ignored by
git), and the pages' generated blocks are filled in as they are read: a build writes no
tracked file.  No page
loads anything from the network: formulas are plain Unicode, the theme's assets are local.
"""
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS))

from _ext import fill_blocks, write_generated  # noqa: E402

import rffbench  # noqa: E402

project = "rffbench"
author = "the rffbench developers"
release = rffbench.__version__
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon",
              "sphinx.ext.viewcode"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
html_theme = "pydata_sphinx_theme"
html_title = f"rffbench {release}"
html_static_path = []
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2,
                      "footer_start": [], "footer_end": []}
html_show_sourcelink = False
html_sidebars = {"**": []}  # the pages are few: the top bar and the page outline suffice
suppress_warnings = ["myst.header"]

write_generated(DOCS / "_generated")


def setup(app):
    fill_blocks(app)  # the pages' generated blocks, current in the build, never written
