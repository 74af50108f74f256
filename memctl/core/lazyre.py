"""Regular expressions compiled the first time they are used, not when their module loads.

The secret detectors are ~170 patterns and the built-in curator's sentence rules ~260:
compiling them cost ~25 ms of CPU at every start of a memctl command that writes a file
and ~60 ms more for `curate`, though a command usually runs only some of them (clean text
passes the redaction prefilter and no detector runs at all; a chat has no code to read).

A `lazy` pattern compiles on its first use. Then the module global that names it is
rebound to the compiled pattern, so the detectors' hot loops read a plain `re.Pattern`
again (attribute calls through a stand-in measured ~5% slower on redaction); a stand-in
held elsewhere (in a tuple or a dict) keeps the compiled pattern's methods as its own.
"""

from __future__ import annotations

import re
import sys
from typing import Any, AnyStr


class _LazyPattern:
    """Stands in for `re.compile(pattern, flags)` until an attribute of it is first read."""

    def __init__(self, pattern: str | bytes, flags: int, names: dict[str, Any]) -> None:
        self.pattern = pattern
        self._flags = flags
        self._names = names

    def __getattr__(self, name: str) -> Any:
        # only called for attributes the instance does not hold yet
        compiled = re.compile(self.pattern, self._flags)
        for attr in dir(compiled):
            if not attr.startswith("_"):
                setattr(self, attr, getattr(compiled, attr))
        for key, value in list(self._names.items()):
            if value is self:
                self._names[key] = compiled
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r})"


def lazy(pattern: AnyStr, flags: int = 0, *, depth: int = 1) -> re.Pattern[AnyStr]:
    """`re.compile(pattern, flags)`, compiled on first use (see the module's docstring).

    `depth` is how many calls up the module that names the pattern is (2 from a helper).
    """
    names = sys._getframe(depth).f_globals  # the defining module's globals, to rebind there
    return _LazyPattern(pattern, flags, names)  # type: ignore[return-value]
