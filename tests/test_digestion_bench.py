"""bench/digestion.py end to end against a scripted model, and its labelled set.

The harness runs over real HTTP to the scripted Ollama server (and to a
small OpenAI-compatible one): the product's prompt goes out, the answers
come back in the shapes small models write, and the figures must follow.
A model that answers exactly the labels scores 100% everywhere; one that
misplaces a fact, keeps what it should ignore, writes English in a German
conversation, repeats the secret and once writes no JSON at all scores
exactly what those errors cost.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
import json
from pathlib import Path
import sys
from typing import Any

from aiohttp import ClientSession, web
import pytest

from bench.digestion import (
    DATA,
    LanguageGuess,
    answer_schema,
    load,
    matches,
    run,
    select,
    table,
    totals,
)
from bench.digestion_clients import SYSTEM_PROMPT, OllamaClient, OpenAIClient
from custom_components.memory.engine import HOUSEHOLD
from custom_components.memory.engine.text import fence_safe
from tests.ollama_server import MODEL, OllamaPeer

# Real sockets, to servers on 127.0.0.1.
pytestmark = pytest.mark.usefixtures("socket_enabled")

ROWS = load(DATA)
UNREADABLE = "fr-03"
ENGLISH = "This is about the home and the family."


def speakers(row: dict[str, Any]) -> list[str]:
    """Return the speakers of a conversation who said something, in order."""
    said = [m["speaker"] for m in row["messages"] if m["role"] == "user"]
    return list(dict.fromkeys(said))


def find_part(prompt: str) -> tuple[dict[str, Any], str]:
    """Return the conversation and the speaker whose part a prompt shows."""
    conversation = prompt.split("<conversation>", 1)[1]
    for row in ROWS:
        for speaker in speakers(row):
            first = next(
                m["text"]
                for m in row["messages"]
                if m["role"] == "user" and m["speaker"] == speaker
            )
            if fence_safe(first) in conversation:
                return row, speaker
    raise AssertionError("a prompt of no labelled conversation")


def about(row: dict[str, Any], owner: str) -> str:
    """How a model names an owner: `household` or the person's name."""
    return HOUSEHOLD if owner == HOUSEHOLD else str(row["people"][owner])


def memory(content: str, about: str) -> dict[str, Any]:
    """One memory as the model writes it."""
    return {
        "content": content,
        "type": "fact",
        "about": about,
        "confidence": 0.9,
        "message_id": None,
        "topic": "",
        "replaces": [],
    }


def right(row: dict[str, Any], speaker: str) -> list[dict[str, Any]]:
    """Exactly the labelled facts of a speaker's part, owned as labelled."""
    return [
        memory(fact["text"], about(row, fact["owner"]))
        for fact in row["facts"]
        if fact["by"] == speaker
    ]


def wrong(row: dict[str, Any], speaker: str) -> list[dict[str, Any]]:
    """Misplace the first fact; in the first part also make every other error."""
    memories = right(row, speaker)
    if memories and speaker != HOUSEHOLD:
        first = memories[0]
        first["about"] = (
            about(row, speaker) if first["about"] == HOUSEHOLD else HOUSEHOLD
        )
    if speaker == speakers(row)[0]:
        name = about(row, speaker)
        memories += [memory(item["text"], name) for item in row["ignore"]]
        memories += [memory(item["text"], name) for item in row["commands"]]
        memories += [memory(f"{name}: {row['secret']}", name), memory(ENGLISH, name)]
    return memories


def shapes(memories: list[dict[str, Any]]) -> Iterator[str]:
    """Write the same answer the ways small models write it, in turn."""
    answer = {"memories": memories, "summary": ""}
    text = json.dumps(answer, ensure_ascii=False)
    yield text
    yield f"<think>Let me look at the conversation.</think>\n{text}"
    yield f"```json\n{text}\n```\nThese are the memories."
    yield repr(answer)
    yield json.dumps(memories, ensure_ascii=False)


def responder(
    make: Callable[[dict[str, Any], str], list[dict[str, Any]]],
) -> Callable[[dict[str, Any]], str]:
    """Answer each request with `make` of its part, cycling through `shapes`."""
    count = 0

    def respond(body: dict[str, Any]) -> str:
        nonlocal count
        row, speaker = find_part(body["messages"][-1]["content"])
        if make is wrong and row["id"] == UNREADABLE:
            return "<think>Hmm.</think> Je n'ai rien trouvé d'important."
        count += 1
        return list(shapes(make(row, speaker)))[count % 5]

    return respond


@pytest.fixture
async def peer() -> AsyncIterator[OllamaPeer]:
    """Start the scripted Ollama server."""
    server = OllamaPeer()
    await server.start()
    yield server
    await server.stop()


def test_the_labelled_set() -> None:
    """42+ conversations in 6 languages; every label is consistent and findable."""
    assert len(ROWS) >= 40
    assert len({row["lang"] for row in ROWS}) >= 5
    assert len({row["id"] for row in ROWS}) == len(ROWS)
    guess = LanguageGuess(sorted({row["lang"] for row in ROWS}))
    for row in ROWS:
        said = " ".join(m["text"] for m in row["messages"] if m["role"] == "user")
        assert row["secret"] in said, row["id"]
        assert row["facts"], row["id"]
        for fact in row["facts"]:
            assert fact["by"] in speakers(row), row["id"]
            assert fact["owner"] in (HOUSEHOLD, fact["by"]), row["id"]
            others = [f for f in row["facts"] if f is not fact]
            assert matches(fact["keys"], fact["text"]), fact["text"]
            assert not any(matches(f["keys"], fact["text"]) for f in others)
        for item in (*row["ignore"], *row["commands"]):
            assert matches(item["keys"], item["text"]), item["text"]
            assert not any(matches(f["keys"], item["text"]) for f in row["facts"])
        for item in row["commands"]:
            assert item["text"] in said, item["text"]
        for text in (
            f["text"] for f in (*row["facts"], *row["ignore"], *row["commands"])
        ):
            assert guess.written_in(text, row["lang"]) is True, text
            other = "de" if row["lang"] == "en" else "en"
            assert guess.written_in(text, other) is False, text
        labels = (*row["facts"], *row["ignore"], *row["commands"])
        assert not any(matches(item["keys"], row["secret"]) for item in labels)


async def test_a_model_answering_the_labels_scores_full(peer: OllamaPeer) -> None:
    """Every shape of a right answer is read; every figure is 100%, nothing leaks."""
    peer.respond = responder(right)
    async with ClientSession() as session:
        client = OllamaClient(session, peer.url, MODEL, schema=answer_schema())
        scores = await run(client, ROWS)
    result = totals(scores)
    parts = sum(len(speakers(row)) for row in ROWS)
    assert (result.conversations, result.calls) == (len(ROWS), parts)
    assert len(peer.requests) == parts
    assert result.precision == result.recall == result.scope_accuracy == 1
    assert result.language_fidelity == 1
    assert (result.unreadable, result.failed) == (0, 0)
    assert (result.secrets_written, result.secrets_stored) == (0, 0)
    assert (result.ignored_kept, result.commands_kept) == (0, 0)
    # The product's prompt went out, as Home Assistant's AI Task sends it.
    for request in peer.requests:
        assert request["format"] == answer_schema()
        assert request["messages"][0]["content"] == SYSTEM_PROMPT.format(
            date="2026-05-04"
        )
    prompts = [request["messages"][1]["content"] for request in peer.requests]
    for name, language in (("Anna", "English"), ("Lena", "German"), ("Sanne", "Dutch")):
        prompt = next(p for p in prompts if f"] {name}: " in p)
        assert f"in {language}, the language of the conversation" in prompt
    # A secret the redaction missed is counted; the others never left.
    leaked_ids = {s.id for s in scores if s.secret_in_prompt}
    for row in ROWS:
        in_prompt = any(
            row["secret"] in prompt and find_part(prompt)[0] is row
            for prompt in prompts
        )
        assert (row["id"] in leaked_ids) == in_prompt, row["id"]
    # Tokens are the server's counts (10 in, 2 out a call), per conversation.
    assert result.prompt_tokens == pytest.approx(10 * parts / len(ROWS))
    assert result.output_tokens == pytest.approx(2 * parts / len(ROWS))
    assert "| all | 42 | 100% | 100% | 100% | 100% | 0 (" in table(scores)


async def test_the_figures_catch_a_bad_model(peer: OllamaPeer) -> None:
    """Misplaced, ignored, commands, wrong language, a leak, no JSON: each counted."""
    peer.respond = responder(wrong)
    async with ClientSession() as session:
        client = OllamaClient(session, peer.url, MODEL, schema=None)
        scores = await run(client, ROWS)
    result = totals(scores)
    assert "format" not in peer.requests[0]
    answered = [row for row in ROWS if row["id"] != UNREADABLE]
    facts = sum(len(row["facts"]) for row in answered)
    ignored = sum(len(row["ignore"]) for row in answered)
    commands = sum(len(row["commands"]) for row in answered)
    extra = 2 * len(answered)  # the secret and the English sentence
    misplaced = sum(
        1
        for row in answered
        for speaker in speakers(row)
        if speaker != HOUSEHOLD and right(row, speaker)
    )
    not_english = sum(1 for row in answered if row["lang"] != "en")
    memories = facts + ignored + commands + extra
    assert result.unreadable == 1
    assert result.precision == pytest.approx(facts / memories)
    assert result.recall == pytest.approx(facts / sum(len(r["facts"]) for r in ROWS))
    assert result.scope_accuracy == pytest.approx((facts - misplaced) / facts)
    # The secret's memory holds no stop word: its language is not told.
    known = memories - len(answered)
    assert result.language_fidelity == pytest.approx((known - not_english) / known)
    assert (result.ignored_kept, result.commands_kept) == (ignored, commands)
    assert result.secrets_written == result.secrets_stored == len(answered)
    [unreadable] = [s for s in scores if s.id == UNREADABLE]
    assert (unreadable.memories, unreadable.found, unreadable.unreadable) == (0, 0, 1)
    misplaced_row = next(s for s in scores if s.id == "en-02")
    assert [kind for _text, _scope, kind in misplaced_row.kept].count("fact") == 2
    assert (misplaced_row.correct, misplaced_row.scoped) == (2, 0)


async def test_an_openai_compatible_endpoint() -> None:
    """Chat completions with the schema as response_format; tokens from usage."""
    seen: list[dict[str, Any]] = []
    answer_for = responder(right)

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append({"auth": request.headers.get("Authorization"), **body})
        return web.json_response(
            {
                "choices": [
                    {"message": {"role": "assistant", "content": answer_for(body)}}
                ],
                "usage": {"prompt_tokens": 700, "completion_tokens": 90},
            }
        )

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    rows = select([row for row in ROWS if row["lang"] in ("es", "it")], 2)
    try:
        async with ClientSession() as session:
            client = OpenAIClient(
                session,
                f"http://127.0.0.1:{port}/v1",
                "local",
                schema=answer_schema(),
                api_key="sk-test",
            )
            scores = await run(client, rows)
    finally:
        await runner.cleanup()
    result = totals(scores)
    assert result.conversations == 4
    assert result.precision == result.recall == result.scope_accuracy == 1
    assert seen[0]["auth"] == "Bearer sk-test"
    assert seen[0]["response_format"]["json_schema"]["schema"] == answer_schema()
    calls = sum(len(speakers(row)) for row in rows)
    assert result.prompt_tokens == pytest.approx(700 * calls / 4)
    assert result.output_tokens == pytest.approx(90 * calls / 4)


async def test_the_command_line(peer: OllamaPeer, tmp_path: Path) -> None:
    """`python bench/digestion.py --ollama ...` prints the table, writes the JSON."""
    peer.respond = responder(right)
    out = tmp_path / "digestion.json"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(DATA.parents[1] / "digestion.py"),
        *("--ollama", peer.url, "--model", MODEL, "--languages", "en,nl"),
        *("--limit", "2", "--json", str(out)),
        stdout=asyncio.subprocess.PIPE,
    )
    stdout, _ = await process.communicate()
    assert process.returncode == 0
    assert "| all | 4 | 100% | 100% | 100% | 100% |" in stdout.decode()
    report = json.loads(out.read_text(encoding="utf-8"))
    assert (report["model"], report["schema"]) == (MODEL, True)
    assert report["totals"]["recall"] == 1
    assert [c["id"] for c in report["conversations"]] == [
        "en-01",
        "en-02",
        "nl-01",
        "nl-02",
    ]
