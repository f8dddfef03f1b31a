"""A TCP proxy the tests put between a client and a server, to cut or stall it.

`TcpProxy(host, port)` listens on 127.0.0.1 (a free port, `proxy.port`)
and forwards every connection to the server at `host:port`, byte for byte
in both directions. `url_through(url)` rewrites a URL's host and port to
the proxy's, keeping user, password, database and parameters. A test
then makes the server go away, hang or come back while its client stays
open:

- `cut()`: close every connection both ways and refuse new ones (the
  listening socket is closed: "connection refused"), as a server that
  stopped or a network that went down;
- `stall()`: accept connections but forward nothing, either way, on old
  ones and new ones (the bytes wait), as a server that hangs or a
  network that drops packets without telling: the client's timeouts
  must end its waits;
- `restore()`: listen again on the same port and forward again; the
  bytes held by a stall then flow (a cut's connections stay closed).

Use it as an async context manager (`async with TcpProxy(...) as proxy`),
or `start()`/`close()`; `connections` counts the connections accepted
and `accepted(n)` waits for the n-th. Engine tests (tests/engine/postgres/test_faults.py)
use it in front of the test PostgreSQL server; integration tests may put
it in front of any TCP server the same way.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit, urlunsplit

LOCALHOST = "127.0.0.1"
_CHUNK = 65536


class TcpProxy:
    """Forward TCP connections from a local port to a server; cut, stall, restore."""

    def __init__(self, host: str, port: int) -> None:
        """Hold the server's address; nothing listens until `start`."""
        self.host = host
        self.target_port = port
        self.port = 0
        self.connections = 0
        self._accepted = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    @classmethod
    def for_url(cls, url: str) -> Self:
        """Make a proxy for the server a URL names (its host and port)."""
        parts = urlsplit(url)
        return cls(parts.hostname or LOCALHOST, parts.port or 5432)

    def url_through(self, url: str) -> str:
        """Return `url` with its host and port replaced by the proxy's."""
        parts = urlsplit(url)
        user = parts.netloc.rpartition("@")[0]
        netloc = (
            f"{user}@{LOCALHOST}:{self.port}" if user else f"{LOCALHOST}:{self.port}"
        )
        return urlunsplit(parts._replace(netloc=netloc))

    async def __aenter__(self) -> Self:
        """Start listening."""
        await self.start()
        return self

    async def __aexit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        """Close every connection and stop listening."""
        await self.close()

    async def start(self) -> None:
        """Listen on 127.0.0.1 (a free port the first time, then the same one)."""
        self._server = await asyncio.start_server(self._serve, LOCALHOST, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def accepted(self, count: int) -> None:
        """Wait until `count` connections were accepted in all."""
        while self.connections < count:
            self._accepted.clear()
            await self._accepted.wait()

    async def cut(self) -> None:
        """Close every connection and refuse new ones until `restore`."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        # Wakes the stalled ones, which then see their connection closed.
        self._flowing.set()
        if server is not None:
            # Returns once every connection's handler has finished.
            async with asyncio.timeout(10):
                await server.wait_closed()

    def stall(self) -> None:
        """Accept connections but forward nothing until `restore`."""
        self._flowing.clear()

    async def restore(self) -> None:
        """Listen again (after a cut) and forward again (after a stall)."""
        if self._server is None:
            await self.start()
        self._flowing.set()

    async def close(self) -> None:
        """Cut everything and stop the connections' tasks."""
        await self.cut()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Connect one client to the server (once flowing) and pump both ways."""
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        self.connections += 1
        self._accepted.set()
        upstream: asyncio.StreamWriter | None = None
        try:
            await self._flowing.wait()
            if writer.is_closing():
                return
            server_reader, upstream = await asyncio.open_connection(
                self.host, self.target_port
            )
            self._writers.add(upstream)
            await asyncio.gather(
                self._pump(reader, upstream), self._pump(server_reader, writer)
            )
        except OSError, asyncio.IncompleteReadError:
            pass
        finally:
            for side in (writer, upstream):
                if side is not None:
                    self._writers.discard(side)
                    side.transport.abort()
            self._tasks.discard(task)

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Copy bytes from `reader` to `writer`, holding them while stalled."""
        while data := await reader.read(_CHUNK):
            await self._flowing.wait()
            if writer.is_closing():
                return
            writer.write(data)
            await writer.drain()
        writer.transport.abort()
