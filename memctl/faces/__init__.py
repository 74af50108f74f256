"""The faces people and agents use: the CLI (cli/), Claude Code hooks (hooks/), the MCP
server (mcp.py), the file watcher (watch.py), the browser viewer (viewer/) and the
LearningMachine (learning.py).

Faces parse input, make calls on the front door (`memctl.Vault`) and render results; they hold
no vault logic of their own.
"""
