"""The floor: the vault's files, their git history and the object features are handed.

Everything that reads or writes a vault file goes through here: paths, the vault lock, the
journal and transactions (store), raw sessions (raw), notes and claims (notes), git (history),
settings (config), references (refs), token counts (tokens), INDEX pages (templates),
provenance checks (provenance), crash recovery (recovery) and redaction of every string that
reaches disk or git (redact). `core.floor.Floor` is the one object a feature receives: it
holds the vault's root, config, lock and history and keeps INDEX files and the search index in
step with every write. Nothing in core imports a feature, a face or the front door.
"""
