"""Imports every command module so that each registers itself on the app."""

from memctl.cli import ingest, read  # noqa: F401
