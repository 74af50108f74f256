"""The JSON shape curators that are not Python (an LLM, a plugin returning dicts) must produce.

`CLAIMS_SCHEMA` is both what the model is shown and what its answer is checked against
(jsonschema, so the two cannot drift apart). The error messages go back to the model
verbatim, so `validate` words jsonschema's first error as the field that is wrong and how.
"""

from __future__ import annotations

from typing import Any

from memctl.curate.model import ACTIONS, Entity, Proposal, Quote

ENTITY_TYPES = ("person", "organisation", "project", "system", "thing")

# A string with something in it besides white space.
_TEXT: dict[str, Any] = {"type": "string", "pattern": r"\S"}

# Sent to the model as part of the prompt; `validate` enforces the same rules.
CLAIMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["claims"],
    "properties": {
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["store", "note", "section", "text", "citations"],
                "properties": {
                    "store": {**_TEXT, "description": "one of the stores listed"},
                    "note": {
                        **_TEXT,
                        "description": "note title; reuse an existing title to add to that note",
                    },
                    "section": {**_TEXT, "description": "a section of that store"},
                    "text": {**_TEXT, "description": "the claim, one sentence"},
                    "citations": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["turn", "quote"],
                            "properties": {
                                "turn": {"type": "integer", "minimum": 1},
                                "quote": {
                                    **_TEXT,
                                    "description": "words copied exactly from that turn",
                                },
                            },
                        },
                    },
                    "inferred": {"type": "boolean"},
                    "observed": {
                        "type": "boolean",
                        "description": "true: what the session shows happening (a command "
                        "run, a commit, a change, a cause found); may cite the assistant's turn",
                    },
                    "action": {"type": "string", "enum": list(ACTIONS)},
                    "replaces": {
                        "type": ["string", "null"],
                        "description": "exact text of the existing claim acted on",
                    },
                    "entity_type": {"type": ["string", "null"], "enum": [*ENTITY_TYPES, None]},
                    "aliases": {"type": "array", "items": {"type": "string"}},
                },
            },
        }
    },
}

_NAMES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "boolean": "true or false",
    "null": "null",
}


class SchemaError(ValueError):
    """The payload does not have the claims shape; the message says where and why."""


def _type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer"}.get(
        type(value), type(value).__name__
    )


def _where(path: list[Any]) -> str:
    if not path:
        return "top level"
    if len(path) == 1:
        return f"'{path[0]}'"
    out = str(path[0])
    for p in path[1:]:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _order(step: Any) -> tuple[int, str]:
    return (step, "") if isinstance(step, int) else (-1, str(step))


def _words(err: Any) -> str:
    """One jsonschema error in words a model can act on."""
    where, v, value = _where(list(err.absolute_path)), err.validator, err.instance
    if not err.absolute_path and v == "type":
        return f"top level must be an object with a 'claims' array, got {_type(value)}"
    if v == "required":
        missing = [k for k in err.validator_value if k not in value]
        return f"{where} is missing '{missing[0]}'"
    if v == "additionalProperties":
        extra = sorted(set(value) - set(err.schema.get("properties", {})))
        if not err.absolute_path:
            return f"unexpected top-level key(s): {', '.join(extra)}"
        return f"{where} has unknown key(s): {', '.join(extra)}"
    if v == "type":
        types = (
            err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        )
        want = " or ".join(_NAMES.get(t, t) for t in types)
        return f"{where} must be {want}, got {_type(value)}"
    if v == "pattern":
        return f"{where} must be a non-empty string"
    if v == "minItems":
        return f"{where} must be a non-empty array"
    if v == "minimum":
        return f"{where} must be a positive integer turn number"
    if v == "enum":
        return f"{where} must be one of {', '.join(str(x) for x in err.validator_value)}"
    return f"{where}: {err.message}"


def validate(payload: Any) -> list[dict[str, Any]]:
    """The list of claim dicts in `payload`, or SchemaError naming the first problem."""
    import jsonschema  # loads only when a curator's answer is checked

    validator = jsonschema.Draft202012Validator(CLAIMS_SCHEMA)
    # the first problem in document order, as a reader (or the model) would meet it
    errors = sorted(validator.iter_errors(payload), key=lambda e: [_order(p) for p in e.path])
    if errors:
        raise SchemaError(_words(errors[0]))
    return payload["claims"]  # type: ignore[no-any-return]


def to_proposal(c: dict[str, Any]) -> Proposal:
    """A validated claim dict -> Proposal."""
    entity = None
    if c.get("entity_type") or c.get("aliases"):
        entity = Entity(c.get("entity_type") or "thing", tuple(c.get("aliases") or ()))
    return Proposal(
        store=c["store"].strip(),
        note=" ".join(c["note"].split()),
        section=c["section"].strip(),
        text=" ".join(c["text"].split()),
        citations=tuple(Quote(int(q["turn"]), q["quote"]) for q in c["citations"]),
        inferred=bool(c.get("inferred", False)),
        observed=bool(c.get("observed", False)),
        action=c.get("action") or "add",
        replaces=c.get("replaces"),
        entity=entity,
    )
