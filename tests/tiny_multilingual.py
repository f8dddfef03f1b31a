"""A tiny model of multilingual-e5-small's family, generated for tests.

Same kind as the real one, at a toy size: a BERT `config.json` with XLM-R's
tokenizer class, random safetensors weights, and a sentencepiece-style
Unigram `tokenizer.json` (Metaspace pre-tokenizer, `<s> … </s>` around every
text, `<s>`/`<pad>`/`</s>`/`<unk>` as ids 0–3) trained with the `tokenizers`
library on a few sentences in several languages and scripts.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from safetensors.numpy import save_file
from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from custom_components.memory.engine.embedding.model.pins import (
    MULTILINGUAL_E5_SMALL,
    ModelFile,
    ModelSpec,
)
from tests.tiny_bert import bert_tensors

CORPUS = [
    "Wann ist Leos Geburtstagsfeier? Leo feiert seinen Geburtstag am Samstag.",
    "Die Restmülltonne wird am Dienstag abgeholt, der Heizöltank ist voll.",
    "Quand est-ce que Mia va nager ? Mia a cours de natation le mercredi.",
    "¿Qué no puede comer Mia? Mia es alérgica a los cacahuetes.",
    "Wanneer is de olietank gevuld? De stookolietank is in maart bijgevuld.",
    "When does my daughter get home from school? Emma is home at four.",
    "Il gatto mangia alle sette. O cão dorme na cozinha. Kot śpi w kuchni.",
    "垃圾车星期二来。 ゴミの日は火曜日です。 쓰레기는 화요일에 수거합니다.",
    "query: passage: ",
]
SPECIAL = ["<s>", "<pad>", "</s>", "<unk>"]


def unigram_tokenizer(corpus: list[str], vocab_size: int) -> Tokenizer:
    """Train an XLM-R-style Unigram tokenizer (ids 0-3: <s> <pad> </s> <unk>)."""
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="▁", prepend_scheme="always"
    )
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        unk_token="<unk>",
        shrinking_factor=0.75,
    )
    tokenizer.train_from_iterator(corpus, trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)],
    )
    return tokenizer


def _pin(folder: Path, name: str) -> ModelFile:
    data = (folder / name).read_bytes()
    return ModelFile(name, len(data), hashlib.sha256(data).hexdigest())


def write_tiny_e5(
    folder: Path, *, hidden: int = 32, layers: int = 2, seed: int = 11
) -> tuple[dict[str, npt.NDArray[np.float32]], dict[str, Any], ModelSpec]:
    """Write the tiny model into `folder`.

    Returns its tensors, its config and a spec with E5's key, prefixes,
    pooling and normalisation, pinned to the written files.
    """
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = unigram_tokenizer(CORPUS, vocab_size=400)
    tokenizer.save(str(folder / "tokenizer.json"))
    vocab = tokenizer.get_vocab_size()
    rng = np.random.default_rng(seed)
    inter = hidden * 4
    config: dict[str, Any] = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "intermediate_size": inter,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": 64,
        "position_embedding_type": "absolute",
        "pad_token_id": 0,
        "type_vocab_size": 2,
        "tokenizer_class": "XLMRobertaTokenizer",
        "vocab_size": vocab,
    }

    # The real checkpoint names its tensors without a "bert." prefix.
    tensors = bert_tensors(
        rng, vocab=vocab, hidden=hidden, inter=inter, layers=layers, pooler_bias=True
    )
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    spec = ModelSpec(
        key=MULTILINGUAL_E5_SMALL.key,
        repo=MULTILINGUAL_E5_SMALL.repo,
        revision=MULTILINGUAL_E5_SMALL.revision,
        dims=hidden,
        max_seq_length=48,
        pooling=MULTILINGUAL_E5_SMALL.pooling,
        normalize=MULTILINGUAL_E5_SMALL.normalize,
        query_prefix=MULTILINGUAL_E5_SMALL.query_prefix,
        passage_prefix=MULTILINGUAL_E5_SMALL.passage_prefix,
        license=MULTILINGUAL_E5_SMALL.license,
        files=tuple(_pin(folder, f.path) for f in MULTILINGUAL_E5_SMALL.files),
    )
    return tensors, config, spec
