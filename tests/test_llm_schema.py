"""The claims schema the model is shown is the one its answer is checked against."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from memctl.curate.schema import CLAIMS_SCHEMA, SchemaError, to_proposal, validate

GOOD: dict[str, Any] = {
    "claims": [
        {
            "store": "profile",
            "note": "Profile: dana",
            "section": "Identity",
            "text": "Dana is a platform engineer.",
            "citations": [{"turn": 1, "quote": "I'm a platform engineer"}],
            "inferred": False,
            "action": "add",
            "replaces": None,
            "entity_type": "person",
            "aliases": ["D"],
        }
    ]
}


def _with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(GOOD)
    node: Any = out
    for step in path[:-1]:
        node = node[step]
    if value is _DROP:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


_DROP = object()
C = ("claims", 0)
CASES: list[tuple[Any, str | None]] = [
    (GOOD, None),
    ([], "top level must be an object with a 'claims' array, got array"),
    ({"claims": "none"}, "'claims' must be an array, got string"),
    ({"claims": [], "extra": 1}, "unexpected top-level key(s): extra"),
    (_with((*C, "note"), _DROP), "claims[0] is missing 'note'"),
    (_with((*C, "colour"), "red"), "claims[0] has unknown key(s): colour"),
    (_with((*C, "text"), "   "), "claims[0].text must be a non-empty string"),
    (_with((*C, "store"), 3), "claims[0].store must be a string, got integer"),
    (_with((*C, "citations"), []), "claims[0].citations must be a non-empty array"),
    (_with((*C, "citations", 0, "turn"), 0),
     "claims[0].citations[0].turn must be a positive integer turn number"),
    (_with((*C, "citations", 0, "turn"), True),
     "claims[0].citations[0].turn must be an integer, got boolean"),
    (_with((*C, "citations", 0, "quote"), ""),
     "claims[0].citations[0].quote must be a non-empty string"),
    (_with((*C, "inferred"), "yes"), "claims[0].inferred must be true or false, got string"),
    (_with((*C, "observed"), "yes"), "claims[0].observed must be true or false, got string"),
    (_with((*C, "observed"), True), None),
    (_with((*C, "action"), "delete"), "claims[0].action must be one of"),
    (_with((*C, "entity_type"), "pet"), "claims[0].entity_type must be one of"),
    (_with((*C, "aliases"), [1]), "claims[0].aliases[0] must be a string, got integer"),
]


@pytest.mark.parametrize(("payload", "message"), CASES)
def test_validate_and_the_schema_shown_to_the_model_agree(
    payload: Any, message: str | None
) -> None:
    shown_ok = jsonschema.Draft202012Validator(CLAIMS_SCHEMA).is_valid(payload)
    if message is None:
        assert shown_ok
        assert validate(payload) == payload["claims"]
        return
    # a rule validate enforces but the prompt's schema does not state is a rule the model
    # cannot know about
    assert not shown_ok, "the schema the model sees allows what validate refuses"
    with pytest.raises(SchemaError) as err:
        validate(payload)
    assert str(err.value).startswith(message)


def test_the_models_observed_key_reaches_the_proposal() -> None:
    # an observed claim may cite the agent's turn; dropping the key would make the engine
    # refuse every such claim as if it said the agent's words were the person's
    seen = validate(_with((*C, "observed"), True))[0]
    assert to_proposal(seen).observed is True
    assert to_proposal(validate(GOOD)[0]).observed is False
