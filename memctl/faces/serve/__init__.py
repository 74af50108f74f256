"""`memctl serve`: one resident memctl per vault, so hooks and read commands skip the imports.

`wire.py` is the client half and the framing both halves share: it imports almost nothing,
because it sits on the path of every prompt Claude Code sends. `server.py` is the resident
process: it holds the vault open, answers over a Unix socket, and stops itself when idle,
when its vault moves or vanishes, or when it grows past its memory cap.
"""
