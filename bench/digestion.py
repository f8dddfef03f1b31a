r"""Digestion quality on a labelled household set: facts kept and missed, whose, in which language, secrets.

Run from the repository root in the Python 3.14 environment, against the
model that digests your conversations:

    python bench/digestion.py --ollama http://localhost:11434 --model qwen2.5:7b
    python bench/digestion.py --openai http://localhost:8080/v1 --model local \\
        [--api-key-env OPENAI_API_KEY]
    python bench/digestion.py --home-assistant http://homeassistant.local:8123 \\
        --token-env HA_TOKEN [--entity ai_task.ollama_ai_task]
    ... [--languages de,fr] [--limit 3] [--free] [--json out.json]

The set, `bench/data/digestion/<lang>.jsonl` (en, de, fr, es, it, nl; 42
conversations), holds one conversation a line: its messages with who said
them (a person, or `household` for a satellite nobody was identified at),
the facts a good digestion keeps (each with the speaker whose part holds it
and its owner: that speaker or the household), facts to ignore (moods,
weather, errands of the day), device commands to skip, and one secret.

Each conversation goes the product's way: saved by the engine's
`ConversationLog` in a temporary database, split by `speaker_parts`, each
part's prompt written by `extraction_prompt` (secrets redacted, the
conversation's language asked for), the answer read by
`model_json.extraction_answer`, checked by digestion's own `EXTRACTION`
structure and turned into memories by `read_extraction` (secrets dropped,
scopes decided). What that yields is scored:

- a memory *matches* a labelled item when, case- and accent-folded, it
  contains every key group of the item (a group is a list of alternatives,
  substrings: `[["lisbon"]]`, `[["6:30", "6.30", "six thirty"]]`); it is
  scored against the conversation's facts first (the first that matches),
  then its facts to ignore, then its device commands;
- fact precision: memories matching a fact / all memories; fact recall:
  facts matched by at least one memory / all facts (saying one fact twice
  costs nothing);
- scope accuracy: of the memories matching a fact, those stored where the
  fact belongs (the speaker, or the household);
- language fidelity: memories written in the conversation's language / the
  memories whose language can be told: a memory's language is the one whose
  stop words (`engine/languages/stopwords`) it holds most of, and when the
  conversation's language ties for the most, it counts as written in it; a
  memory with no stop word at all is not counted;
- secrets: how many conversations' secret reached the prompt (redaction
  missed it), was written by the model, and was stored (it survived the
  product's own filters into a memory or the summary);
- ignored and commands: memories that kept a fact to ignore, a device
  command; unreadable: answers with no JSON the structure accepts;
- tokens (as the endpoint reports them) and seconds, per conversation.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
import json
import os
from pathlib import Path
import re
import sys
import tempfile
from typing import Any, Final

import aiohttp

REPO: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from homeassistant.helpers import llm  # noqa: E402
import probatio  # noqa: E402

from bench.digestion_clients import (  # noqa: E402
    Client,
    HomeAssistantClient,
    OllamaClient,
    OpenAIClient,
    selector_structure,
)
from custom_components.memory.const import DEFAULT_DIGEST_MIN_USER_WORDS  # noqa: E402
from custom_components.memory.digestion import EXTRACT_TASK, EXTRACTION  # noqa: E402
from custom_components.memory.engine import (  # noqa: E402
    HOUSEHOLD,
    ConversationInfo,
    ConversationLog,
    MemoryStore,
    MessageRole,
    NewMessage,
)
from custom_components.memory.engine.digestion.answers import extraction_answer  # noqa: E402
from custom_components.memory.engine.digestion.extraction import (  # noqa: E402
    MEMORY_TYPES,
    SpeakerPart,
    extraction_prompt,
    known_memories,
    known_query,
    names_for,
    part_source,
    read_extraction,
    speaker_names,
    speaker_parts,
    summary_memory,
)
from custom_components.memory.engine.digestion.queue import (  # noqa: E402
    DigestQueue,
    PendingConversation,
)
from custom_components.memory.engine.languages.tags import language_name  # noqa: E402
from custom_components.memory.engine.text import fold  # noqa: E402

DATA: Final = REPO / "bench" / "data" / "digestion"
STOP_WORDS_DIR: Final = (
    REPO / "custom_components" / "memory" / "engine" / "languages" / "stopwords"
)
# When every conversation of the set took place (its prompt's date).
STARTED: Final = datetime(2026, 5, 4, 18, 30, tzinfo=UTC)
_WORDS: Final = re.compile(r"\w+")
_NOT_ALNUM: Final = re.compile(r"[^0-9a-z]")


def load(folder: Path = DATA, languages: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Every conversation of the set (of `languages`, all when empty)."""
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl")):
        if languages and path.stem not in languages:
            continue
        text = path.read_text(encoding="utf-8")
        rows.extend(json.loads(line) for line in text.splitlines() if line.strip())
    return rows


def scope_of(key: str) -> str:
    """Return the scope of a speaker or owner of the set (`person.<key>`)."""
    return HOUSEHOLD if key == HOUSEHOLD else f"person.{key}"


def matches(keys: Sequence[Sequence[str]], text: str) -> bool:
    """Whether folded `text` holds one alternative of every key group."""
    folded = fold(text)
    return all(any(fold(word) in folded for word in group) for group in keys)


def _stop_words(language: str) -> frozenset[str]:
    path = STOP_WORDS_DIR / f"{language}.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(
        word.casefold()
        for line in lines
        if not line.startswith("#")
        for word in line.split()
    )


class LanguageGuess:
    """Tells a memory's language by its stop words, among the set's languages."""

    def __init__(self, languages: Sequence[str]) -> None:
        """Read the engine's stop-word list of each language."""
        self._words = {language: _stop_words(language) for language in languages}

    def written_in(self, text: str, language: str) -> bool | None:
        """Whether `text` is in `language`; None when it has no stop word."""
        words = _WORDS.findall(text.casefold())
        counts = {
            lang: sum(w in stop for w in words) for lang, stop in self._words.items()
        }
        best = max(counts.values(), default=0)
        if best == 0:
            return None
        return counts.get(language, 0) == best


def _normal(text: str) -> str:
    return _NOT_ALNUM.sub("", fold(text))


@dataclass(slots=True)
class Score:
    """What digesting one conversation gave, against its labels."""

    id: str
    lang: str
    facts: int = 0
    memories: int = 0
    correct: int = 0
    scoped: int = 0
    ignored: int = 0
    commands: int = 0
    in_language: int = 0
    language_known: int = 0
    calls: int = 0
    unreadable: int = 0
    failed: int = 0
    secret_in_prompt: bool = False
    secret_written: bool = False
    secret_stored: bool = False
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    seconds: float = 0.0
    # Indexes of the facts some memory matched.
    found_facts: list[int] = field(default_factory=list)
    # (memory, its scope, what it matched: "fact", "ignore", "command" or "").
    kept: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def found(self) -> int:
        """Facts matched by at least one memory."""
        return len(self.found_facts)


def _add_tokens(total: int | None, more: int | None) -> int | None:
    return more if total is None else total + (more or 0)


def score_memories(
    score: Score,
    row: dict[str, Any],
    memories: Sequence[tuple[str, str]],
    guess: LanguageGuess,
) -> None:
    """Score stored memories (content, scope) of one conversation's part."""
    for content, scope in memories:
        score.memories += 1
        if (written := guess.written_in(content, row["lang"])) is not None:
            score.language_known += 1
            score.in_language += written
        kind = ""
        for index, fact in enumerate(row["facts"]):
            if matches(fact["keys"], content):
                kind = "fact"
                score.correct += 1
                score.scoped += scope == scope_of(fact["owner"])
                if index not in score.found_facts:
                    score.found_facts.append(index)
                break
        else:
            if any(matches(item["keys"], content) for item in row["ignore"]):
                kind = "ignore"
                score.ignored += 1
            elif any(matches(item["keys"], content) for item in row["commands"]):
                kind = "command"
                score.commands += 1
        score.kept.append((content, scope, kind))


async def digest_one(
    store: MemoryStore,
    row: dict[str, Any],
    client: Client,
    guess: LanguageGuess,
) -> Score:
    """Digest one conversation the product's way; score what it stored."""
    log = ConversationLog(store)
    people: dict[str, str] = row["people"]
    first = row["messages"][0]["speaker"]
    messages = [
        NewMessage(
            role=MessageRole(message["role"]),
            content=message["text"],
            created_at=STARTED + timedelta(minutes=index),
            scope=scope_of(message["speaker"]),
            language=row["lang"],
        )
        for index, message in enumerate(row["messages"])
    ]
    info = ConversationInfo(
        conversation_id=row["id"], started_at=STARTED, scope=scope_of(first)
    )
    [conversation_row] = await log.save([(None, info, messages)])
    queue = DigestQueue(store)
    pending = await queue.get(conversation_row)
    if pending is None:
        raise LookupError(row["id"])
    stored = await log.messages(conversation_row)
    language = await queue.language(conversation_row)

    def label(scope: str) -> str:
        return HOUSEHOLD if scope == HOUSEHOLD else people[scope.partition(".")[2]]

    parts, _skipped = speaker_parts(
        pending,
        stored,
        names=speaker_names(stored, label),
        since=None,
        min_user_words=DEFAULT_DIGEST_MIN_USER_WORDS,
    )
    score = Score(row["id"], row["lang"], facts=len(row["facts"]))
    context = _Context(store, row, pending, label, language, client, guess)
    for part in parts:
        await _digest_part(context, part, score)
    return score


@dataclass(frozen=True, slots=True)
class _Context:
    """What every part of one conversation is digested with."""

    store: MemoryStore
    row: dict[str, Any]
    pending: PendingConversation
    label: Callable[[str], str]
    language: str
    client: Client
    guess: LanguageGuess


async def _digest_part(context: _Context, part: SpeakerPart, score: Score) -> None:
    """One part's call, read and scored as digestion reads it."""
    store, row, language = context.store, context.row, context.language
    secret = _normal(row["secret"])
    persons = [scope for scope in part.transcript.speakers if scope != HOUSEHOLD]
    names = names_for(persons, context.label)
    text = known_query(part.transcript)
    known = await known_memories(
        store, persons, text=text, vector=None, language=language or None
    )
    prompt = extraction_prompt(
        part.transcript,
        names=names,
        known=known,
        day=STARTED,
        language=language_name(language or store.language),
    )
    score.calls += 1
    score.secret_in_prompt |= secret in _normal(prompt)
    try:
        reply = await context.client.ask(prompt, date=STARTED.date().isoformat())
    except aiohttp.ClientError, TimeoutError, KeyError, ValueError:
        score.failed += 1
        return
    score.seconds += reply.seconds
    score.prompt_tokens = _add_tokens(score.prompt_tokens, reply.prompt_tokens)
    score.output_tokens = _add_tokens(score.output_tokens, reply.output_tokens)
    written = (
        reply.answer if isinstance(reply.answer, str) else json.dumps(reply.answer)
    )
    score.secret_written |= secret in _normal(written)
    try:
        data = EXTRACTION(extraction_answer(reply.answer))
    except probatio.Invalid:
        score.unreadable += 1
        return
    extracted = read_extraction(
        data,
        part=part,
        names=names,
        source=part_source(context.pending, part.messages),
        known_ids={item.id for item in known},
        language=language or None,
    )
    kept = [(c.content, c.scope) for c in extracted.candidates]
    stored = [f"{c.content} {c.topic}" for c in extracted.candidates]
    if (summary := summary_memory(extracted)) is not None:
        stored.append(summary.content)
    score.secret_stored |= any(secret in _normal(text) for text in stored)
    score_memories(score, row, kept, context.guess)


@dataclass(frozen=True, slots=True)
class Totals:
    """The figures of a set of conversations."""

    conversations: int
    precision: float | None
    recall: float | None
    scope_accuracy: float | None
    language_fidelity: float | None
    secrets_in_prompt: int
    secrets_written: int
    secrets_stored: int
    ignored_kept: int
    commands_kept: int
    unreadable: int
    failed: int
    calls: int
    prompt_tokens: float | None
    output_tokens: float | None
    seconds: float


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def totals(scores: Sequence[Score]) -> Totals:
    """Sum scores; shares of sums; tokens and seconds per conversation."""

    def total(name: str) -> int:
        return sum(getattr(score, name) for score in scores)

    count = len(scores)
    tokens_in = [s.prompt_tokens for s in scores if s.prompt_tokens is not None]
    tokens_out = [s.output_tokens for s in scores if s.output_tokens is not None]
    return Totals(
        conversations=count,
        precision=_share(total("correct"), total("memories")),
        recall=_share(total("found"), total("facts")),
        scope_accuracy=_share(total("scoped"), total("correct")),
        language_fidelity=_share(total("in_language"), total("language_known")),
        secrets_in_prompt=total("secret_in_prompt"),
        secrets_written=total("secret_written"),
        secrets_stored=total("secret_stored"),
        ignored_kept=total("ignored"),
        commands_kept=total("commands"),
        unreadable=total("unreadable"),
        failed=total("failed"),
        calls=total("calls"),
        prompt_tokens=sum(tokens_in) / len(tokens_in) if tokens_in else None,
        output_tokens=sum(tokens_out) / len(tokens_out) if tokens_out else None,
        seconds=total("seconds") / count if count else 0.0,
    )


async def run(client: Client, rows: Sequence[dict[str, Any]]) -> list[Score]:
    """Digest every conversation through `client` in a temporary database."""
    guess = LanguageGuess(sorted({row["lang"] for row in rows}))
    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore(Path(folder) / "digestion.db", vector_backend="numpy")
        await store.open()
        try:
            return [await digest_one(store, row, client, guess) for row in rows]
        finally:
            await store.close()


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def table(scores: Sequence[Score]) -> str:
    """Render a Markdown table: one row a language, then all."""
    head = (
        "| set | conv. | precision | recall | scope | language | secrets stored "
        "(in prompt, written) | ignored kept | commands kept | unreadable | "
        "tokens in / out | s / conv. |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    groups = {
        lang: [s for s in scores if s.lang == lang]
        for lang in sorted({s.lang for s in scores})
    }
    lines = []
    for name, group in [*groups.items(), ("all", list(scores))]:
        t = totals(group)
        lines.append(
            f"| {name} | {t.conversations} | {_pct(t.precision)} | {_pct(t.recall)} | "
            f"{_pct(t.scope_accuracy)} | {_pct(t.language_fidelity)} | "
            f"{t.secrets_stored} ({t.secrets_in_prompt}, {t.secrets_written}) | "
            f"{t.ignored_kept} | {t.commands_kept} | {t.unreadable}/{t.calls} | "
            f"{_num(t.prompt_tokens)} / {_num(t.output_tokens)} | {t.seconds:.1f} |"
        )
    return head + "\n".join(lines) + "\n"


def answer_schema() -> dict[str, Any]:
    """Render the answer's JSON schema as Home Assistant's `ollama` does."""
    schema: dict[str, Any] = probatio.to_openapi(
        EXTRACTION, custom_serializer=llm.selector_serializer, openapi_version="3.1.0"
    )
    return schema


def client_for(args: argparse.Namespace, session: aiohttp.ClientSession) -> Client:
    """Make the client the command line names."""
    schema = None if args.free else answer_schema()
    if args.ollama:
        return OllamaClient(
            session, args.ollama, args.model, schema=schema, num_ctx=args.num_ctx
        )
    if args.openai:
        key = os.environ.get(args.api_key_env, "") if args.api_key_env else ""
        return OpenAIClient(
            session, args.openai, args.model, schema=schema, api_key=key
        )
    return HomeAssistantClient(
        session,
        args.home_assistant,
        os.environ[args.token_env],
        structure=selector_structure(MEMORY_TYPES),
        task_name=EXTRACT_TASK,
        entity_id=args.entity,
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--ollama", metavar="URL", help="an Ollama server")
    where.add_argument(
        "--openai", metavar="URL", help="an OpenAI-compatible base URL (…/v1)"
    )
    where.add_argument(
        "--home-assistant", metavar="URL", help="a running Home Assistant"
    )
    parser.add_argument("--model", default="", help="the model (Ollama, OpenAI)")
    parser.add_argument(
        "--api-key-env", default="", help="variable holding the API key"
    )
    parser.add_argument(
        "--token-env", default="HA_TOKEN", help="variable holding HA's token"
    )
    parser.add_argument(
        "--entity", default=None, help="AI Task entity (else HA's preferred)"
    )
    parser.add_argument("--num-ctx", type=int, default=8192, help="Ollama's num_ctx")
    parser.add_argument("--free", action="store_true", help="send no JSON schema")
    parser.add_argument("--languages", default="", help="e.g. de,fr (default: all)")
    parser.add_argument(
        "--limit", type=int, default=0, help="conversations per language"
    )
    parser.add_argument(
        "--data", type=Path, default=DATA, help="the labelled set's folder"
    )
    parser.add_argument(
        "--json", type=Path, default=None, help="write every score here"
    )
    args = parser.parse_args(argv)
    if (args.ollama or args.openai) and not args.model:
        parser.error("--model is required with --ollama and --openai")
    return args


def select(rows: Sequence[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """At most `limit` conversations of each language (0: all)."""
    seen: dict[str, int] = {}
    chosen = []
    for row in rows:
        seen[row["lang"]] = seen.get(row["lang"], 0) + 1
        if not limit or seen[row["lang"]] <= limit:
            chosen.append(row)
    return chosen


async def measure(args: argparse.Namespace) -> list[Score]:
    """Run the set through the endpoint the command line names."""
    languages = [code for code in args.languages.split(",") if code]
    rows = select(load(args.data, languages), args.limit)
    async with aiohttp.ClientSession() as session:
        return await run(client_for(args, session), rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print the table, optionally write every score as JSON."""
    args = parse_args(argv)
    scores = asyncio.run(measure(args))
    print(table(scores), end="")
    if args.json is not None:
        report = {
            "endpoint": args.ollama or args.openai or args.home_assistant,
            "model": args.model or args.entity,
            "schema": not args.free,
            "totals": asdict(totals(scores)),
            "conversations": [asdict(score) for score in scores],
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
