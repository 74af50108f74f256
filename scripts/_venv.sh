# Sourced by scripts/demo and scripts/test: make .venv once and install memctl into it.
# The install is editable, so it needs redoing only when pyproject.toml or the extras asked
# for change: a stamp per extras in .venv records pyproject.toml as installed, and a second
# run skips pip (~4 s). Installing with extras also stands for the plain install.
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
_extras="${MEMCTL_EXTRAS:-.}"
_stamp=".venv/.memctl-installed-$(printf '%s' "$_extras" | tr -c 'A-Za-z0-9' '_')"
if [ ! -f "$_stamp" ] || ! cmp -s pyproject.toml "$_stamp" || ! .venv/bin/python -c 'import memctl' 2>/dev/null; then
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e "$_extras"
  cp pyproject.toml "$_stamp"
  cp pyproject.toml ".venv/.memctl-installed-_"
fi
unset _extras _stamp
