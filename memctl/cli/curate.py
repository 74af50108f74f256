"""memctl curate commands (to be filled)."""
