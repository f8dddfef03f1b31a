"""Random BERT weights at a toy size, named as a checkpoint names them.

Shared by the tests' generated models (the MiniLM-like one in
`tests/engine/test_encoder.py` and the E5-like one in
`tests/tiny_multilingual.py`), which differ in size, prefix and pooler.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

type Tensors = dict[str, npt.NDArray[np.float32]]


def bert_tensors(
    rng: np.random.Generator,
    *,
    vocab: int,
    hidden: int,
    inter: int,
    layers: int,
    prefix: str = "",
    pooler_bias: bool = False,
) -> Tensors:
    """Draw every tensor of a BERT from `rng`, each name after `prefix`.

    Weights are normal with scale 0.3, biases 0.1, layer-norm weights near 1;
    the pooler has a bias only with `pooler_bias`.
    """

    def rand(*shape: int, scale: float = 0.3) -> npt.NDArray[np.float32]:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    tensors = {
        f"{prefix}embeddings.word_embeddings.weight": rand(vocab, hidden),
        f"{prefix}embeddings.position_embeddings.weight": rand(64, hidden),
        f"{prefix}embeddings.token_type_embeddings.weight": rand(2, hidden),
        f"{prefix}embeddings.LayerNorm.weight": 1 + rand(hidden, scale=0.1),
        f"{prefix}embeddings.LayerNorm.bias": rand(hidden, scale=0.1),
        f"{prefix}pooler.dense.weight": rand(hidden, hidden),
    }
    if pooler_bias:
        tensors[f"{prefix}pooler.dense.bias"] = rand(hidden, scale=0.1)
    for i in range(layers):
        p = f"{prefix}encoder.layer.{i}."
        for name in ("query", "key", "value"):
            tensors[p + f"attention.self.{name}.weight"] = rand(hidden, hidden)
            tensors[p + f"attention.self.{name}.bias"] = rand(hidden, scale=0.1)
        tensors[p + "attention.output.dense.weight"] = rand(hidden, hidden)
        tensors[p + "attention.output.dense.bias"] = rand(hidden, scale=0.1)
        tensors[p + "intermediate.dense.weight"] = rand(inter, hidden)
        tensors[p + "intermediate.dense.bias"] = rand(inter, scale=0.1)
        tensors[p + "output.dense.weight"] = rand(hidden, inter)
        tensors[p + "output.dense.bias"] = rand(hidden, scale=0.1)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[p + ln + ".weight"] = 1 + rand(hidden, scale=0.1)
            tensors[p + ln + ".bias"] = rand(hidden, scale=0.1)
    return tensors
