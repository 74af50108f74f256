"""The JSON shape curators that are not Python (an LLM, a plugin returning dicts) must produce.

Written by hand, with a small validator, rather than pulling in a JSON Schema library: the
shape is small and the error messages go back to the model verbatim, so they should say
exactly which field is wrong in words a model can act on.
"""

from __future__ import annotations

from typing import Any

from memctl.curate import ACTIONS, Entity, Proposal, Quote

ENTITY_TYPES = ("person", "organisation", "project", "system", "thing")

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
                    "store": {"type": "string", "description": "one of the stores listed"},
                    "note": {
                        "type": "string",
                        "description": "note title; reuse an existing title to add to that note",
                    },
                    "section": {"type": "string", "description": "a section of that store"},
                    "text": {"type": "string", "description": "the claim, one sentence"},
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
                                    "type": "string",
                                    "description": "words copied exactly from that turn",
                                },
                            },
                        },
                    },
                    "inferred": {"type": "boolean"},
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

_CLAIM_KEYS = set(CLAIMS_SCHEMA["properties"]["claims"]["items"]["properties"])
_REQUIRED = ("store", "note", "section", "text", "citations")


class SchemaError(ValueError):
    """The payload does not have the claims shape; the message says where and why."""


def _type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer"}.get(
        type(value), type(value).__name__
    )


def validate(payload: Any) -> list[dict[str, Any]]:
    """The list of claim dicts in `payload`, or SchemaError naming the first problem."""
    if not isinstance(payload, dict):
        raise SchemaError(
            f"top level must be an object with a 'claims' array, got {_type(payload)}"
        )
    extra = set(payload) - {"claims"}
    if extra:
        raise SchemaError(f"unexpected top-level key(s): {', '.join(sorted(extra))}")
    claims = payload.get("claims")
    if not isinstance(claims, list):
        raise SchemaError(f"'claims' must be an array, got {_type(claims)}")
    for i, c in enumerate(claims):
        where = f"claims[{i}]"
        if not isinstance(c, dict):
            raise SchemaError(f"{where} must be an object, got {_type(c)}")
        for k in _REQUIRED:
            if k not in c:
                raise SchemaError(f"{where} is missing '{k}'")
        unknown = set(c) - _CLAIM_KEYS
        if unknown:
            raise SchemaError(f"{where} has unknown key(s): {', '.join(sorted(unknown))}")
        for k in ("store", "note", "section", "text"):
            if not isinstance(c[k], str) or not c[k].strip():
                raise SchemaError(f"{where}.{k} must be a non-empty string")
        cites = c["citations"]
        if not isinstance(cites, list) or not cites:
            raise SchemaError(f"{where}.citations must be a non-empty array")
        for j, q in enumerate(cites):
            w = f"{where}.citations[{j}]"
            if not isinstance(q, dict) or set(q) - {"turn", "quote"}:
                raise SchemaError(f"{w} must be an object with only 'turn' and 'quote'")
            if type(q.get("turn")) is not int or q["turn"] < 1:
                raise SchemaError(f"{w}.turn must be a positive integer turn number")
            if not isinstance(q.get("quote"), str) or not q["quote"].strip():
                raise SchemaError(f"{w}.quote must be a non-empty string")
        if "inferred" in c and type(c["inferred"]) is not bool:
            raise SchemaError(f"{where}.inferred must be true or false")
        if "action" in c and c["action"] not in ACTIONS:
            raise SchemaError(f"{where}.action must be one of {', '.join(ACTIONS)}")
        if c.get("replaces") is not None and not isinstance(c["replaces"], str):
            raise SchemaError(f"{where}.replaces must be a string or null")
        et = c.get("entity_type")
        if et is not None and et not in ENTITY_TYPES:
            raise SchemaError(f"{where}.entity_type must be one of {', '.join(ENTITY_TYPES)}")
        aliases = c.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise SchemaError(f"{where}.aliases must be an array of strings")
    return claims


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
        citations=tuple(Quote(q["turn"], q["quote"]) for q in c["citations"]),
        inferred=bool(c.get("inferred", False)),
        action=c.get("action") or "add",
        replaces=c.get("replaces"),
        entity=entity,
    )
