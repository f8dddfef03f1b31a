"""What small local models write when asked for JSON, read by `model_json`.

Each case is a shape seen from real models (a reasoning block, a Markdown
fence, prose around the JSON, Python's quotes, a bare list): the answer is
read to the same object a clean JSON answer gives, and what holds no answer
is left for the schema to reject.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from custom_components.memory.engine.digestion.answers import (
    ModelJSONError,
    answer_object,
    extraction_answer,
    read_json,
)

MEMORY = {
    "content": "Anna is allergic to peanuts.",
    "type": "fact",
    "about": "Anna",
    "confidence": 0.9,
    "message_id": 1,
    "topic": "allergy",
    "replaces": [],
}
ANSWER = {"memories": [MEMORY], "summary": "Anna talked about food."}
CLEAN = json.dumps(ANSWER, ensure_ascii=False)
PYTHON = repr(ANSWER)  # single quotes, as a model imitating Python writes


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(CLEAN, id="clean"),
        pytest.param(
            "<think>Anna mentioned peanuts. {not json} Is it durable? Yes.</think>\n"
            + CLEAN,
            id="think block first",
        ),
        pytest.param(
            "Okay, the user wants memories.\n</think>\n\n" + CLEAN,
            id="think closed only (opened by the chat template)",
        ),
        pytest.param(f"```json\n{CLEAN}\n```", id="markdown fence"),
        pytest.param(f"Here you go:\n```\n{CLEAN}\n```\nAnything else?", id="fence"),
        pytest.param(
            f"{CLEAN}\n\nI extracted one memory [1] because it is durable.",
            id="trailing prose",
        ),
        pytest.param(
            f"Sure! Based on message [1], here is the JSON: {CLEAN} Hope it helps.",
            id="prose around, a citation before",
        ),
        pytest.param(PYTHON, id="single quotes"),
        pytest.param(
            "{'memories': [{'content': 'Anna is allergic to peanuts.', 'type': "
            "'fact', 'about': 'Anna', 'confidence': 0.9, 'message_id': 1, "
            "'topic': 'allergy', 'replaces': [],},], 'summary': "
            "'Anna talked about food.',}",
            id="single quotes, trailing commas",
        ),
        pytest.param(
            "<think>hmm</think>\n```json\n" + PYTHON + "\n```\nDone.",
            id="all at once",
        ),
    ],
)
def test_answer_read_from_what_models_write(text: str) -> None:
    """Every shape gives the object a clean answer gives."""
    assert read_json(text) == ANSWER


def test_python_words_and_escapes_in_single_quotes() -> None:
    """True/None become JSON's; an escaped quote and a double quote survive."""
    text = "{'content': 'Tom\\'s \"big\" day', 'ok': True, 'id': None}"
    assert read_json(text) == {"content": 'Tom\'s "big" day', "ok": True, "id": None}


def test_raw_newline_inside_a_string() -> None:
    """A model that breaks a line inside a string still gives its answer."""
    assert read_json('{"summary": "one\ntwo"}') == {"summary": "one\ntwo"}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Nothing worth remembering.",
        "[1] and [2]",
        "<think>{'a': 1}</think>",
        "{'memories': [{'content': 'cut off here",
    ],
)
def test_no_answer_raises(text: str) -> None:
    """Prose, a citation, JSON only in the reasoning, a cut-off answer: none."""
    with pytest.raises(ModelJSONError):
        read_json(text)


def test_a_list_where_an_object_was_asked() -> None:
    """A bare list of memories is the memories; the missing summary is ''."""
    assert extraction_answer(f"```json\n[{json.dumps(MEMORY)}]\n```") == {
        "memories": [MEMORY],
        "summary": "",
    }
    assert extraction_answer([]) == {"memories": [], "summary": ""}


def test_an_object_keeps_its_keys() -> None:
    """A parsed object passes; only the keys it lacks get their default."""
    assert extraction_answer(ANSWER) == ANSWER
    assert answer_object({"decisions": []}, items="decisions") == {"decisions": []}


@pytest.mark.parametrize("answer", ["no JSON here", 42, None])
def test_unreadable_answers_are_left_for_the_schema(answer: Any) -> None:
    """What cannot be read comes back as it was (the schema rejects it)."""
    assert extraction_answer(answer) == answer
