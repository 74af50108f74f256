"""Transcripts in: read every supported format (formats/) and write raw sessions.

A feature over the floor: it turns transcripts into verbatim, redacted raw session files and
feeds the search index as it writes them. Add a transcript format in formats/; change how a
session is named, appended or refused in ingest/run.py.
"""
