"""memctl recall commands (to be filled)."""
