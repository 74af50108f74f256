"""Folder watches (Linux inotify) that let a long-lived process skip the freshness stat walk.

The index's every-command check (memctl.index.sync) stats every folder and every note: on a
100k-turn vault with 2k notes that is ~2,800 stats, about a sixth of an in-process recall.
An MCP server or learning loop recalls over and over against a vault that rarely changes, so
once one check has passed with every folder watched, "no event since" says the same thing
for free: the kernel queues an event on a watched folder from inside the very system call
that creates, deletes, renames, writes or touches an entry of it, so an edit that finished
before we look is always in the queue when we look. Any event at all, or anything this
module cannot vouch for, just means "check the way you always did".

Only where that holds is it used: Linux, a local filesystem (a network or FUSE mount can be
changed by another machine without an event here), and the process that set the watches (a
forked child would steal its parent's events). `memctl.index` decides when to trust it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

# inotify(7): what changes an entry of a watched folder, or the folder itself
_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
    | _IN_DONT_FOLLOW
)
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC

# Filesystems whose every change passes through this kernel (and so raises its events).
# (Not overlay: a change made in one of its layers directly raises nothing on the mount.)
LOCAL_FS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "zfs", "bcachefs"})

_libc: Any = None


def _load_libc() -> Any:
    global _libc
    if _libc is None:
        try:
            import ctypes

            try:
                # glibc's soname; find_library would run `ldconfig -p` to say so (~4 ms)
                lib = ctypes.CDLL("libc.so.6", use_errno=True)
            except OSError:
                import ctypes.util

                lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            lib.inotify_init1.argtypes = [ctypes.c_int]
            lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            _libc = lib
        except (ImportError, OSError, AttributeError):
            _libc = False
    return _libc


def fs_type(path: str) -> str | None:
    """The filesystem type of the mount holding `path`, from /proc/self/mountinfo."""
    try:
        real = os.path.realpath(path)
        best, kind = "", None
        with Path("/proc/self/mountinfo").open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                fields = left.split()
                if len(fields) < 5 or not right:
                    continue
                point = fields[4].replace("\\040", " ")
                inside = real == point or real.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, kind = point, right.split()[0]
        return kind
    except OSError:
        return None


class Watch:
    """One inotify instance watching a set of folders; `quiet()` says whether any changed."""

    def __init__(self) -> None:
        lib = _load_libc()
        if not lib:
            raise OSError("no inotify here")
        fd = lib.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            raise OSError("inotify_init1 failed")
        self.fd: int | None = fd
        self.pid = os.getpid()
        self.folders: set[str] = set()

    def add(self, folders: list[str]) -> bool:
        """Watch these folders too; False when one cannot be watched (gone, or no room)."""
        lib = _load_libc()
        if self.fd is None or not lib:
            return False
        for path in folders:
            if path in self.folders:
                continue
            if lib.inotify_add_watch(self.fd, os.fsencode(path), _MASK) < 0:
                return False
            self.folders.add(path)
        return True

    def quiet(self) -> bool:
        """True when no watched folder saw a change since the watches were set.

        Reading drains the queue, so after a False the watch is spent: `close` it and
        start a new one (its folders may have moved, or been replaced).
        """
        if self.fd is None or self.pid != os.getpid():
            return False
        try:
            os.read(self.fd, 65536)
        except BlockingIOError:
            return True
        except OSError:
            pass
        return False

    def close(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None and self.pid == os.getpid():
            with contextlib.suppress(OSError):
                os.close(fd)


_AVAILABLE: dict[str, bool] = {}


def available(root: str) -> bool:
    """Can changes under `root` be watched with the guarantee above? (Once per root.)"""
    ok = _AVAILABLE.get(root)
    if ok is None:
        ok = _AVAILABLE[root] = (
            sys.platform.startswith("linux") and fs_type(root) in LOCAL_FS and bool(_load_libc())
        )
    return ok
