"""The framed normalizers (Bedrock, Ollama, Gemini) share one feed / close shape and one
never-raise safety net (providers.base.FramedNormalizer)."""

from __future__ import annotations

from typing import Any

import pytest

_FRAMED_TEXT = {
    "ollama": (
        b'{"model":"m","message":{"role":"assistant","content":"Hel"},"done":false}\n'
        b'{"model":"m","message":{"role":"assistant","content":"lo"},"done":false}\n'
    ),
    "google-generative-ai": (
        b'data: {"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"}}]}\r\n\r\n'
        b'data: {"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"}}]}\r\n\r\n'
    ),
}


@pytest.mark.parametrize("protocol", sorted(_FRAMED_TEXT))
@pytest.mark.parametrize("where", ["feed", "close"])
def test_a_bug_in_a_framed_normalizer_ends_in_an_error_that_keeps_the_text(
    protocol: str, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception of ours in the middle of a stream is an error event with what was
    received, never a traceback (the never-raise net lives once, in FramedNormalizer)."""
    from harness.providers import get_normalizer

    norm = get_normalizer(protocol)
    body = _FRAMED_TEXT[protocol]
    events = norm.feed(body)
    assert all(e.type != "error" for e in events)

    def boom(*_: Any) -> Any:
        raise KeyError("planted")

    monkeypatch.setattr(norm, "frames" if where == "feed" else "on_eof", boom)
    if where == "feed":
        events += norm.feed(b"\n")
    events += norm.close()
    last = events[-1]
    assert last.type == "error"
    assert "internal error" in last.error_message and "planted" in last.error_message
    assert [b.content for b in last.message.content] == ["Hello"]
    assert norm.close() == []  # terminated: nothing more, and no second terminal
