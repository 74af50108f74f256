# Sourced by scripts/demo and scripts/test: make .venv once and install memctl into it.
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e "${MEMCTL_EXTRAS:-.}"
