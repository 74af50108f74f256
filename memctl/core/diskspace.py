"""A write that failed for want of room, told the same way wherever it happens.

A full disk or quota (ENOSPC, EDQUOT) and a file size limit (EFBIG: `ulimit -f`, a
filesystem's largest file) are one problem to the user, with one remedy. They reach memctl
as an OSError, or from tantivy as ValueError("An IO error occurred: '... (os error 28)'").
"""

from __future__ import annotations

import errno
import os

# A write that failed for want of room: a full disk or quota, or a file size limit (ulimit
# -f, a filesystem's largest file). To the user these are one problem with one remedy.
SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
NO_SPACE = "disk full or file size limit"
# tantivy reports an I/O failure as ValueError("An IO error occurred: '... (os error 28)'")
_RUST_OS_ERROR = " (os error "


def out_of_space(exc: BaseException) -> bool:
    """Did this write fail because the disk (or the file size limit) had no room?"""
    if isinstance(exc, OSError):
        return exc.errno in SPACE_ERRNOS
    text = str(exc)
    at = text.rfind(_RUST_OS_ERROR)
    code = text[at + len(_RUST_OS_ERROR) :].split(")", 1)[0] if at >= 0 else ""
    return code.isdigit() and int(code) in SPACE_ERRNOS


def space_text(exc: BaseException) -> str:
    """A space failure as the user reads it: "disk full or file size limit: File too large"."""
    if isinstance(exc, OSError) and exc.errno in SPACE_ERRNOS:
        return f"{NO_SPACE}: {os.strerror(exc.errno)}"
    text = str(exc)
    at = text.rfind(_RUST_OS_ERROR)
    code = text[at + len(_RUST_OS_ERROR) :].split(")", 1)[0] if at >= 0 else ""
    return f"{NO_SPACE}: {os.strerror(int(code))}" if code.isdigit() else NO_SPACE
