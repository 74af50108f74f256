"""The profile and custom instructions a person wrote into their chat app's settings.

A ChatGPT export carries them in a hidden `user_editable_context` node, which ingest keeps
verbatim as a turn of its own kind (`meta.content_type`). The app wraps the person's words in
its own preamble ("The user provided the following information about themselves ..."); only
the fenced text inside is theirs. Each "Key: value" line of the profile becomes a profile line
as stated; free text is put in the third person; each line of the instructions is proposed as
a standing instruction, in the person's words.
"""

from __future__ import annotations

import re
from functools import cache

from memctl.core.lazyre import lazy
from memctl.curate import Batch, Proposal, Quote
from memctl.curate.builtin.coding.voice import third_person
from memctl.curate.builtin.lexicon import lines
from memctl.curate.builtin.sentences import end, prose_sentences

CONTEXT = "user_editable_context"
_FENCE = lazy(r"```(?:\w+\n)?(?P<body>.*?)```", re.S)
_FIELD = lazy(r"^(?P<key>[A-Z][\w /'-]{1,40}):[ \t]*(?P<value>\S.*)$")
_NAME_KEYS = ("preferred name", "name", "what should chatgpt call you")
# Keys whose value is free prose about the person rather than a short answer.
_PROSE_KEYS = ("other information", "about me", "anything else", "more about you")


def is_context(m: object) -> bool:
    meta = getattr(m, "meta", None)
    return isinstance(meta, dict) and meta.get("content_type") == CONTEXT


def stated_name(batch: Batch) -> str | None:
    """The name the person asked to be called in their settings, if they gave one."""
    for m in batch.messages:
        if is_context(m):
            for line in _bodies(m.content):
                f = _FIELD.match(line.strip())
                if f and f.group("key").strip().lower() in _NAME_KEYS:
                    return f.group("value").strip().rstrip(".")
    return None


def _bodies(text: str) -> list[str]:
    """The person's lines: inside the app's fences when there are any, else every line but
    the app's own preamble (`tables/chat_app_preamble.txt`)."""
    fenced = [m.group("body") for m in _FENCE.finditer(text)]
    if fenced:
        return [line for b in fenced for line in b.split("\n") if line.strip()]
    return [ln for ln in text.split("\n") if ln.strip() and not _preamble().search(ln.strip())]


@cache
def _preamble() -> re.Pattern[str]:
    return lazy("|".join(f"(?:{p})" for p in lines("chat_app_preamble")), re.I)


def claims(batch: Batch, name: str) -> list[Proposal]:
    """Profile lines and proposed instructions from every context turn in the batch."""
    out: list[Proposal] = []
    scope = "team" if batch.scope in ("team", "global") else batch.user
    for i, m in enumerate(batch.messages, 1):
        if i < batch.start or not is_context(m) or m.role != "user":
            continue
        profile_part, _, instructions_part = _parts(m)
        for line in _bodies(profile_part):
            f = _FIELD.match(line.strip())
            if f:
                key, value = f.group("key").strip(), f.group("value").strip()
                if key.lower() in _NAME_KEYS:
                    continue  # the name is who the user is, not a fact about them
                if key.lower() in _PROSE_KEYS:
                    for s in prose_sentences(value):
                        _profile(out, batch, end(third_person(s, name, "the assistant")), i, s)
                else:
                    _profile(
                        out,
                        batch,
                        end(f"{name}'s {key[0].lower()}{key[1:]}: {value}"),
                        i,
                        line.strip(),
                    )
            else:
                for s in prose_sentences(line):
                    if len(s.split()) >= 3:
                        _profile(out, batch, end(third_person(s, name, "the assistant")), i, s)
        if "instructions" not in batch.stores:
            continue
        for line in _bodies(instructions_part):
            for s in prose_sentences(line):
                if len(s.split()) >= 3:
                    out.append(
                        Proposal(
                            "instructions",
                            f"Instructions ({scope})",
                            "Instructions",
                            end(s[0].upper() + s[1:]),
                            (Quote(i, s),),
                            slug=scope,
                        )
                    )
    return out


def _parts(m: object) -> tuple[str, str, str]:
    """(profile, "", instructions) from the export's own fields when it kept them (the current
    `user_profile`/`user_instructions`, the older `about_user_message`/`about_model_message`),
    else from the turn's text."""
    fields = getattr(m, "meta", {}).get("content")
    text = str(getattr(m, "content", ""))
    if isinstance(fields, dict):
        prof = fields.get("user_profile") or fields.get("about_user_message")
        inst = fields.get("user_instructions") or fields.get("about_model_message")
        if isinstance(prof, str) or isinstance(inst, str):
            return (prof if isinstance(prof, str) else "", "",
                    inst if isinstance(inst, str) else "")  # fmt: skip
    return _split(text)


def _split(text: str) -> tuple[str, str, str]:
    """(profile, "", instructions): the app writes the profile first, then how to respond."""
    m = re.search(r"(?im)^.*(?:how they would like you to respond|custom instructions).*$", text)
    if not m:
        return text, "", ""
    return text[: m.start()], "", text[m.start() :]


def _profile(out: list[Proposal], batch: Batch, text: str, turn: int, quote: str) -> None:
    if "profile" not in batch.stores or len(quote.strip()) < 8:
        return
    title = batch.stores["profile"].title
    try:
        note = title.format(user=batch.user, topic=batch.user, name=batch.user)
    except (KeyError, IndexError, ValueError):
        note = f"Profile: {batch.user}"
    out.append(Proposal("profile", note, "Identity", text, (Quote(turn, quote),), slug=batch.user))
