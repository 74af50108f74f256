"""Imports every command module so that each registers itself on the app."""

from memctl.cli import curate, ingest, read, recall, search, watch  # noqa: F401
