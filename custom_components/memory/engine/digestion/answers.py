"""The JSON in what a language model wrote, as small local models write it.

Asked for JSON, a model may think aloud first (`<think>…</think>`), wrap the
JSON in a Markdown fence, add prose before or after it, quote strings with
single quotes and write `True`/`None` (Python's way, with a trailing comma),
or answer a bare list where an object was asked. `read_json` finds the
value in such text; `answer_object` also makes a bare list the object that
was asked for, and `extraction_answer` is that for digestion's question
(memories and a summary, read by `extraction.read_extraction`). Nothing else
is guessed: what is not found is left for the caller's schema to reject.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
import json
import re
from typing import Any, Final

# A reasoning block, closed; "</think>" alone ends one whose opening tag the
# chat template wrote (DeepSeek-R1, Qwen3).
_THINK: Final = re.compile(
    r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE
)
_THINK_END: Final = re.compile(r"</(?:think|thinking|reasoning)>", re.IGNORECASE)
_FENCE: Final = re.compile(r"```[\w-]*[ \t]*\n?(.*?)```", re.DOTALL)
_PYTHON_WORDS: Final = {"True": "true", "False": "false", "None": "null"}
_WORD: Final = re.compile(r"[A-Za-z_]\w*")
_TRAILING_COMMA: Final = re.compile(r",(\s*[}\]])")


class ModelJSONError(ValueError):
    """No JSON object (or list of objects) in what the model wrote."""


def read_json(text: str) -> Any:
    """Return the first JSON object, or list of objects, in a model's text.

    A bare number or a list of anything else (a "[1]" citing a message) is
    prose, not the answer. Raises ModelJSONError when there is none.
    """
    text = _THINK.sub("", text)
    if (end := _THINK_END.search(text)) is not None:
        text = text[end.end() :]
    for chunk in (*_FENCE.findall(text), text):
        for value in _values(chunk):
            return value
    raise ModelJSONError("no JSON object in the answer")


def answer_object(
    answer: Any, *, items: str, defaults: Mapping[str, Any] | None = None
) -> Any:
    """Make an answer the object asked for, whose list is under `items`.

    Text is read with `read_json`; a bare list becomes `{items: list}`; keys
    of `defaults` an object lacks are added. What cannot be read is returned
    as it came, for the schema to reject.
    """
    if isinstance(answer, str):
        try:
            answer = read_json(answer)
        except ModelJSONError:
            return answer
    if isinstance(answer, list):
        answer = {items: answer}
    if isinstance(answer, dict):
        return {**(defaults or {}), **answer}
    return answer


def extraction_answer(answer: Any) -> Any:
    """Digestion's answer as asked: a bare list is its memories; no summary is ''."""
    return answer_object(answer, items="memories", defaults={"summary": ""})


def _values(chunk: str) -> Iterator[Any]:
    """Every answer-shaped JSON value starting at a bracket, left to right."""
    decoder = json.JSONDecoder(strict=False)  # a raw newline in a string
    for start, char in enumerate(chunk):
        if char not in "{[":
            continue
        for source in (chunk[start:], _as_json(chunk[start:])):
            try:
                value, _end = decoder.raw_decode(source)
            except ValueError:
                continue
            if _answer_shaped(value):
                yield value
            break


def _answer_shaped(value: Any) -> bool:
    if isinstance(value, dict):
        return True
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


def _as_json(text: str) -> str:
    """Python-style literals as JSON: single quotes, True/None, trailing commas.

    Double-quoted strings are copied as they are; a single-quoted one is
    re-quoted, an escaped quote in it unescaped. Words outside strings become JSON's.
    """
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char in "\"'":
            end = _string_end(text, index)
            body = text[index + 1 : end]
            if char == '"':
                out.append(f'"{body}"')
            else:
                out.append(json.dumps(body.replace("\\'", "'")))
            index = end + 1
        elif (word := _WORD.match(text, index)) is not None:
            out.append(_PYTHON_WORDS.get(word.group(), word.group()))
            index = word.end()
        else:
            out.append(char)
            index += 1
    return _TRAILING_COMMA.sub(r"\1", "".join(out))


def _string_end(text: str, start: int) -> int:
    """Index of the quote closing the string opened at `start` (or the end)."""
    quote = text[start]
    index = start + 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == quote:
            return index
        index += 1
    return len(text)
