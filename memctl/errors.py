"""One exception family, so the CLI has exactly one place that turns failures into exit codes."""

from __future__ import annotations

from pathlib import Path


class MemctlError(Exception):
    """A failure the user can act on; rendered as one line naming the file and line."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        path: str | Path | None = None,
        line: int | None = None,
        exit_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


class InputError(MemctlError):
    """Bad user input (a malformed transcript, an unknown format): exit 2, nothing written."""

    exit_code = 2


class PathEscapeError(MemctlError):
    """A path the confinement rule refuses; `why` says which rule, for callers that word
    their own message ("'X' is outside the vault (it climbs out with '..')")."""

    exit_code = 2

    def __init__(self, text: str, why: str) -> None:
        super().__init__(f"path escapes the vault: {text!r} ({why})")
        self.why = why


class NotATranscriptError(InputError):
    """The file is not a chat transcript at all (unknown format, binary, empty, no speakers).

    In a folder such a file is skipped with a note (a README beside the sessions); named
    on its own it is an error like any other bad input.
    """


class VaultNotFoundError(MemctlError):
    """No vault where one was expected; the message says how to point memctl at one."""

    exit_code = 2


class ConflictError(MemctlError):
    """The input contradicts the vault (e.g. a session whose past turns changed)."""

    exit_code = 3


class LockTimeoutError(MemctlError):
    """Another memctl process holds the vault lock for longer than we are willing to wait."""

    exit_code = 4


class CurationError(MemctlError):
    """A curator failed (bad model output after retries, an unreachable model)."""

    exit_code = 5


class ReadOnlyVaultError(LockTimeoutError):
    """The vault cannot be written at all (a read-only mount). A kind of lock failure, so a
    reader that only wanted the lock to refresh the index goes on with what is there."""

    exit_code = 1
