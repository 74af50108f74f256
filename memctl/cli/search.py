"""memctl search commands (to be filled)."""
