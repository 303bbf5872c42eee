"""Small streaming cassettes written on the fly, shared by the workflow command tests.

Imported by bare name (pytest puts tests/ on sys.path). lint, bless and their kin each
need "a cassette holding these bodies" and nothing else about it, so it is written one
way: a POST to ``uri`` with a streaming request, each body a 200 ``text/event-stream``
response.
"""

from __future__ import annotations

from pathlib import Path

from stream_harness.recordings.cassette import Interaction, Request, Response, dump_cassette

ANTHROPIC_URI = "https://api.anthropic.com/v1/messages"


def write_sse_cassette(path: Path, *bodies: bytes, uri: str = ANTHROPIC_URI) -> Path:
    """A cassette at ``path`` with one interaction per body, in order."""
    dump_cassette(
        [
            Interaction(
                i,
                Request("POST", uri, {}, b'{"stream":true}'),
                Response(200, "OK", {"content-type": ["text/event-stream"]}, body),
            )
            for i, body in enumerate(bodies)
        ],
        path,
    )
    return path
