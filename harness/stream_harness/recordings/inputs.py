"""Reading what a user points the CLI at: a cassette or a raw response body.

Every failure here is a :class:`InputError` whose text is one line naming the file and
the problem, so the CLI can print it as is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stream_harness.providers.registry import (
    UnknownProtocolError,
    detect_protocol,
    is_registered,
    protocol_ids,
)
from stream_harness.recordings.cassette import (
    Cassette,
    CassetteError,
    Interaction,
    Request,
    Response,
    load_cassette,
)


class InputError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Body:
    """One response body to normalize, with where it came from."""

    source: str
    protocol: str
    status: int
    headers: dict[str, list[str]]
    data: bytes


def _looks_like_cassette(path: Path, head: bytes) -> bool:
    return path.suffix in (".yaml", ".yml") or head.lstrip().startswith(b"interactions:")


def read_body(path: Path, *, protocol: str | None, interaction: int | None) -> Body:
    if protocol is not None and not is_registered(protocol):
        raise InputError(f"unknown protocol {protocol!r} (known: {', '.join(protocol_ids())})")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if _looks_like_cassette(path, raw[:64]):
        try:
            cassette = load_cassette(path)
        except CassetteError as exc:
            raise InputError(str(exc)) from None
        chosen = pick_interaction(cassette, interaction)
        try:
            proto = protocol or detect_protocol(chosen)
        except UnknownProtocolError as exc:
            raise InputError(f"{path}: {exc}") from None
        r = chosen.response
        return Body(f"{path}#{chosen.index}", proto, r.status, dict(r.headers), r.body)
    if interaction is not None:
        raise InputError(f"{path}: --interaction applies to cassettes, and this is a raw body")
    proto = protocol or _detect_raw(path, raw)
    return Body(str(path), proto, 200, {}, raw)


def pick_interaction(cassette: Cassette, index: int | None) -> Interaction:
    items = cassette.interactions
    if not items:
        raise InputError(f"{cassette.path}: the cassette has no interactions")
    if index is None:
        streaming = [i for i in items if i.is_streaming]
        return (streaming or list(items))[0]
    if not 0 <= index < len(items):
        raise InputError(f"{cassette.path}: no interaction {index} (it has {len(items)})")
    return items[index]


def _detect_raw(path: Path, raw: bytes) -> str:
    fake = Interaction(
        index=0,
        request=Request(method="POST", uri="", headers={}, body=b""),
        response=Response(status=200, reason="OK", headers={}, body=raw),
    )
    try:
        return detect_protocol(fake)
    except UnknownProtocolError:
        raise InputError(
            f"{path}: cannot tell the protocol from the body: name it with --protocol"
        ) from None


def display_path(path: Path) -> str:
    """A path as the user typed it; an absolute one under the working directory, relative.

    Reproduce commands and reports repeat cassette paths back to the user, who should be
    able to paste them from where they ran the command.
    """
    if not path.is_absolute():
        return str(path)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
