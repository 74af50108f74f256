"""Imports every command module so that each registers itself on the app.

The order here is the order of `memctl --help`: get memories in, find them, learn from
them, use them.
"""
# isort: skip_file

from memctl.faces.cli import ingest  # noqa: F401
from memctl.faces.cli import read  # noqa: F401
from memctl.faces.cli import search  # noqa: F401
from memctl.faces.cli import watch  # noqa: F401
from memctl.faces.cli import view  # noqa: F401
from memctl.faces.cli import curate  # noqa: F401
from memctl.faces.cli import remember  # noqa: F401
from memctl.faces.cli import recall  # noqa: F401
from memctl.faces.cli import serve  # noqa: F401
from memctl.faces.cli import doctor  # noqa: F401
from memctl.faces.cli import gitcmds  # noqa: F401
