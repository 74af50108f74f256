"""`python -m memctl` runs the CLI."""

from memctl.faces.cli import main

main()
