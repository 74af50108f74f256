"""The search index: a rebuildable tantivy index of every turn, note and claim, kept in step
with the files (the floor's second half, beside core/).

schema.py     what a document holds, the analyzers, SCHEMA_VERSION
freshness.py  where the live generation is and whether the files moved since (stat walk, watch)
writer.py     build, update and feed the index; `after_write` runs after every vault write
reader.py     filters and queries to tantivy, hits and snippets
search.py     `memctl search`: a question to a query plan, ranked hits
kinds.py, fsnotify.py   the WordNet kinds table; inotify for long-lived processes
host.py       `IndexedVault`: what the index needs of the vault (it may not name the floor)
"""
