"""`python -m memctl` runs the CLI."""

from memctl.cli import main

main()
