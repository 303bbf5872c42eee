"""The transport seam: serve a recorded response through httpx in chosen chunks.

vcrpy hands a recorded body back as one chunk and patches ``httpx.MockTransport`` while a
cassette is active, merging chunks (research: ecosystem.md section 0). So replay uses our
own MockTransport with no vcrpy context: the client library under test runs its real
streaming code on exactly the chunks a hypothesis strategy chose. The same shape works for
``httpx2`` (which the anthropic SDK 2.x requires) by passing that module.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from types import ModuleType
from typing import Any

import httpx

from stream_harness.recordings.cassette import Response

# Hop-by-hop and length headers would contradict the re-chunked, already-decoded body.
_DROP = {"content-length", "content-encoding", "transfer-encoding", "connection"}


def response_headers(response: Response) -> list[tuple[str, str]]:
    return [
        (k, v) for k, values in response.headers.items() if k.lower() not in _DROP for v in values
    ]


class _Chunks:
    """A sync and async byte stream over fixed chunks (httpx's stream interfaces)."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self._chunks = [bytes(c) for c in chunks if c]

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


def replay_transport(
    response: Response,
    chunks: Sequence[bytes] | None = None,
    *,
    httpx_module: ModuleType | None = None,
    requests: list[Any] | None = None,
) -> Any:
    """A MockTransport answering every request with ``response``, body in ``chunks``.

    ``requests``, if given, collects the requests the client sent (for asserting on them).
    """
    mod = httpx_module or httpx
    body_chunks = list(chunks) if chunks is not None else [response.body]
    headers = response_headers(response)

    def handler(request: Any) -> Any:
        if requests is not None:
            requests.append(request)
        stream_cls = _make_stream_class(mod)
        return mod.Response(response.status, headers=headers, stream=stream_cls(body_chunks))

    return mod.MockTransport(handler)


_STREAM_CLASSES: dict[int, type] = {}


def _make_stream_class(mod: ModuleType) -> type:
    """A stream class deriving from the module's own SyncByteStream and AsyncByteStream."""
    cls = _STREAM_CLASSES.get(id(mod))
    if cls is None:
        cls = type("ReplayStream", (_Chunks, mod.SyncByteStream, mod.AsyncByteStream), {})
        _STREAM_CLASSES[id(mod)] = cls
    return cls
