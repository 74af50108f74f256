"""The config is checked against its schema when it is read.

Each bad value is one line naming the key and the file, exit 2, before any command runs;
`gc` never meets an OverflowError, a TypeError or a string read a character at a time.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest
from util import memctl, new_vault, ok

from memctl.core.config import DEFAULT_CONFIG_TOML
from memctl.core.configschema import validate


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new vault, built once; each case below breaks the config of a copy."""
    return new_vault(tmp_path_factory.mktemp("fresh"))


@pytest.mark.parametrize(("snippet", "key"), [
    ('[retention]\nraw_max_age = "999999999999y"\n', "raw_max_age"),
    ("[retention]\npinned = 5\n", "pinned"),
    ('[retention]\nraw_max_age_by_scope = "team"\n', "raw_max_age_by_scope"),
    ('[retention]\npinned = "decisions/*"\n', "pinned"),
    ('[retention]\nraw_max_age = "soon"\n', "raw_max_age"),
    ('[stores.sessions]\nttl = 30\n', "ttl"),
    ('[recall]\nbudget = "lots"\n', "budget"),
    ("[recall]\nbudget = -5\n", "budget"),
    ('[ingest]\nredact = "no"\n', "redact"),
    ("[curate]\nmax_retries = 1e9\n", "max_retries"),
    ('[curate]\nmodle = "openai/gpt-4o-mini"\n', "modle"),
    ('[retension]\nraw_max_age = "2y"\n', "retension"),
    ('[stores.runbooks]\nfolder = "runbooks"\nmatch = ["(unclosed"]\n', "match"),
    ('[stores.runbooks]\nfolder = "runbooks"\nmdoe = "propose"\n', "mdoe"),
])
def test_a_bad_key_is_one_line_naming_key_file_and_line(tmp_path: Path, snippet: str,
                                                         key: str, fresh: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(fresh, vault, symlinks=True)
    cfg = vault / ".memctl" / "config.toml"
    base = "# memctl vault configuration\n\n[vault]\n\n"
    cfg.write_text(base + snippet, encoding="utf-8")
    for args in (["gc"], ["status"]):
        r = memctl("--vault", vault, *args)
        assert r.code == 2, (args, r.out, r.err)
        assert len(r.err.strip().splitlines()) == 1, r.err
        assert key in r.err and "config.toml" in r.err, r.err
        assert "Traceback" not in r.err and "Error:" not in r.err.split(":", 2)[-1][:1]
        line = base.count("\n") + 1 + snippet.split("\n").index(
            next(x for x in snippet.split("\n") if x.lstrip("[").startswith(key)))
        assert f"config.toml:{line}:" in r.err, (line, r.err)


def test_the_template_lists_every_retention_key_and_they_validate(tmp_path: Path) -> None:
    for key in ("# [retention]", "raw_max_age", "raw_max_age_by_scope", "pinned", "ttl"):
        assert key in DEFAULT_CONFIG_TOML
    # the commented examples, uncommented, are valid
    lines = []
    for line in DEFAULT_CONFIG_TOML.splitlines():
        s = line.lstrip()
        if s.startswith(("# raw_max_age", "# pinned", "# ttl", "# [stores.sessions]",
                         "# [retention]")):
            s = s[2:]
            lines.append(s.split("  #")[0])
        elif not s.startswith("#"):
            lines.append(line)
    text = "\n".join(lines)
    data = tomllib.loads(text)
    assert data["retention"]["pinned"] == ["decisions/*"]
    assert data["stores"]["sessions"]["ttl"] == "180d"
    validate(data, Path("config.toml"), text)
    vault = new_vault(tmp_path)
    (vault / ".memctl" / "config.toml").write_text(text, encoding="utf-8")
    ok("--vault", vault, "gc")


def test_good_retention_config_still_runs_gc(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    cfg = vault / ".memctl" / "config.toml"
    cfg.write_text(cfg.read_text() + '\n[retention]\nraw_max_age = "100y"\n'
                   'raw_max_age_by_scope = { "user:*" = "90d" }\npinned = ["decisions/*"]\n',
                   encoding="utf-8")
    ok("--vault", vault, "gc")


def test_every_documented_remember_setting_loads(tmp_path: Path) -> None:
    """The Stop hook's ask is configured under [remember] (README); those keys must load,
    and a wrong value is one line like any other."""
    vault = new_vault(tmp_path)
    cfg = vault / ".memctl" / "config.toml"
    base = "# memctl vault configuration\n\n[vault]\n\n"
    cfg.write_text(base + '[remember]\nask = "off"\nask_after = 5\n', encoding="utf-8")
    ok("--vault", vault, "status")
    cfg.write_text(base + "[remember]\nask = 7\n", encoding="utf-8")
    r = memctl("--vault", vault, "status")
    assert r.code == 2 and "ask" in r.err and len(r.err.strip().splitlines()) == 1, r.err


@pytest.mark.parametrize(("snippet", "key", "line"), [
    ('[ingest]\nredcat = false\n', "redcat", 2),
    ('[curate]\nmax_retries = "many"\n', "max_retries", 2),
    ('\n[retension]\nraw_max_age = "2y"\n', "retension", 2),
    ('[ingest]\nredact = tru\n', "", 2),  # not TOML at all
])
def test_the_local_override_is_checked_like_the_tracked_config(tmp_path: Path, snippet: str,
                                                               key: str, line: int) -> None:
    """config.local.toml wins over the tracked config (docs/sync.md), so a typo there is a
    setting the person believes pinned and does not have: one line, file and line, exit 2."""
    vault = new_vault(tmp_path)
    local = vault / ".memctl" / "config.local.toml"
    local.write_text(snippet, encoding="utf-8")
    for args in (["status"], ["recall", "egress"]):
        r = memctl("--vault", vault, *args)
        assert r.code == 2, (args, r.out, r.err)
        assert len(r.err.strip().splitlines()) == 1, r.err
        assert key in r.err and f"config.local.toml:{line}:" in r.err, r.err
        assert "Traceback" not in r.err
    local.write_text("[ingest]\nredact = true\n", encoding="utf-8")
    ok("--vault", vault, "status")


def test_a_config_read_again_is_read_as_it_is_now_and_each_caller_owns_its_copy(
    tmp_path: Path,
) -> None:
    """A resident process reads the config for every request from what it parsed before,
    by text: each reader gets its own copy, an edit is read anew, a bad edit still fails."""
    from memctl.core.config import CONFIG_REL, load_config
    from memctl.errors import MemctlError

    v = new_vault(tmp_path)
    first = load_config(v, {})
    first.data.setdefault("recall", {})["budget"] = 7  # one caller's change
    again = load_config(v, {})
    assert again.data.get("recall", {}).get("budget") != 7
    assert again.recall_budget == first.recall_budget
    cfg = v / CONFIG_REL
    text = cfg.read_text(encoding="utf-8")
    assert "\nbudget = 1500 " in text
    cfg.write_text(text.replace("\nbudget = 1500 ", "\nbudget = 900 ", 1), encoding="utf-8")
    assert load_config(v, {}).recall_budget == 900
    cfg.write_text(text.replace("\nbudget = 1500 ", '\nbudget = "lots" ', 1), encoding="utf-8")
    for _ in range(2):
        with pytest.raises(MemctlError, match="budget"):
            load_config(v, {})
    cfg.write_text(text, encoding="utf-8")
    assert load_config(v, {}).recall_budget == first.recall_budget
