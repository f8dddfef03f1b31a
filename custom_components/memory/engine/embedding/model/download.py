"""Downloading the built-in model's files: resumable, verified, with progress.

A broken download resumes with an HTTP Range request from its `.part` file
instead of starting over, which matters on slow links and small devices;
every file is checked against its pinned SHA-256 (`model_files`) before it
takes its final name. The caller hands in its `aiohttp.ClientSession` and, if
it wants, the executor that runs the blocking file work.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
import hashlib
import io
import os
from pathlib import Path
import re
from typing import BinaryIO

import aiohttp

from ...opening import opened
from .pins import (
    HASH_BLOCK,
    HF_BASE_URL,
    PART_SUFFIX,
    ChecksumMismatchError,
    ModelFile,
    ModelFilesError,
    ModelSpec,
    check_file,
    file_url,
)

_WRITE_BLOCK = 1 << 20
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


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
        while block := self._stream.read(HASH_BLOCK):
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
        # Opened in the executor whatever happens here: a download cancelled
        # meanwhile closes the file before it stops (`opening.opened`).
        part = await opened(
            self._run(_PartFile, part_path, model_file.size),
            lambda opened_part: self._run(opened_part.close),
        )
        start = part.size
        try:
            self._report(model_file, start)
            if start < model_file.size:
                await self._receive(model_file, part, start)
                self._report(model_file, part.size)
        finally:
            await self._run(part.close)
        if part.size != model_file.size:
            await self._run(part.discard)
            raise ModelFilesError(
                f"{model_file.path}: got {part.size} bytes, expected {model_file.size}"
            )
        actual = part.digest.hexdigest()
        if actual != model_file.sha256:
            await self._run(part.discard)
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
