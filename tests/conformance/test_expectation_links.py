"""Every known failure cites something a reader can act on (issue 13, "One verdict").

A known failure's ``issue`` is the verdict's evidence: the upstream issue or pull request
of *that* library, or our own finding written up ready to file
(``conformance_report/findings/*.md``). A tracker's front page
(``https://github.com/<owner>/<repo>/issues``) says nothing, and an issue of a sibling
library (the TypeScript SDK's for the Python SDK, the Python SDK's for the Node one) is a
different bug in a different codebase: a fix there does not fix the adapter's row.

``FAMILY`` is the map from adapter to the repositories it may cite: the library's own,
and the libraries it streams through in the same language (pydantic-ai's Gemini model
streams through google-genai, LangChain's ChatOpenAI through openai-python), whose bug
is then the adapter's bug too. ``PROVIDERS`` are the servers whose wire faults a row may
cite whatever the adapter (a provider fault passed on is the provider's issue).
Documentation hosts are allowed per adapter for rows that cite a documented design
choice rather than a bug. A gateway's rows (``litellm-proxy[<upstream>-><client>]``) are
one family, the gateway's: ``FAMILY`` keys on the part before ``[``.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

import pytest

from stream_harness.adapters.gateways.catalog import GATEWAYS
from stream_harness.adapters.loading import BUILTIN
from stream_harness.adapters.registry import THIRD_PARTY
from stream_harness.conformance.expectations import (
    adapter_from_file_name,
    expectations_dir,
    expectations_for,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
FINDINGS = "conformance_report/findings/"

_PY_SDKS = ("openai/openai-python", "anthropics/anthropic-sdk-python", "googleapis/python-genai")
_JS_SDKS = ("openai/openai-node", "anthropics/anthropic-sdk-typescript", "googleapis/js-genai")

# adapter -> (GitHub repositories, documentation hosts) it may cite.
FAMILY: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "reference": ((), ()),
    "anthropic-sdk": (
        ("anthropics/anthropic-sdk-python",),
        ("docs.anthropic.com", "platform.claude.com"),
    ),
    "anthropic-sdk-beta": (
        ("anthropics/anthropic-sdk-python",),
        ("docs.anthropic.com", "platform.claude.com"),
    ),
    "openai-sdk": (("openai/openai-python",), ("platform.openai.com",)),
    "openai-sdk-create": (("openai/openai-python",), ("platform.openai.com",)),
    "openai-sdk-websocket": (
        ("openai/openai-python", "python-websockets/websockets"),
        ("platform.openai.com", "developers.openai.com"),
    ),
    "google-genai": (("googleapis/python-genai",), ("googleapis.github.io", "ai.google.dev")),
    "cohere": (("cohere-ai/cohere-python",), ("docs.cohere.com",)),
    "mistral-sdk": (("mistralai/client-python",), ("docs.mistral.ai",)),
    "google-genai-vertex": (
        ("googleapis/python-genai",),
        ("googleapis.github.io", "ai.google.dev", "cloud.google.com"),
    ),
    "anthropic-sdk-vertex": (
        ("anthropics/anthropic-sdk-python",),
        ("docs.anthropic.com", "platform.claude.com", "cloud.google.com"),
    ),
    "anthropic-bedrock-sdk": (
        ("anthropics/anthropic-sdk-python", "boto/botocore"),
        ("docs.anthropic.com", "platform.claude.com", "docs.aws.amazon.com"),
    ),
    "boto3-bedrock-invoke": (("boto/boto3", "boto/botocore"), ("docs.aws.amazon.com",)),
    "litellm": (("BerriAI/litellm", "openai/openai-python"), ("docs.litellm.ai",)),
    "pydantic-ai": (("pydantic/pydantic-ai", *_PY_SDKS), ("ai.pydantic.dev",)),
    "langchain": (
        (
            "langchain-ai/langchain",
            "langchain-ai/langchain-google",
            *_PY_SDKS,
            # ChatBedrock and ChatCohere, and the SDKs they stream through.
            "langchain-ai/langchain-aws",
            "langchain-ai/langchain-cohere",
            "boto/botocore",
            "cohere-ai/cohere-python",
        ),
        ("python.langchain.com", "docs.langchain.com"),
    ),
    "any-llm": (("mozilla-ai/any-llm", *_PY_SDKS), ("mozilla-ai.github.io",)),
    "aisuite": (("andrewyng/aisuite", *_PY_SDKS), ()),
    "llm": (("simonw/llm", "openai/openai-python"), ("llm.datasette.io",)),
    "js-anthropic-sdk": (
        ("anthropics/anthropic-sdk-typescript",),
        ("docs.anthropic.com", "platform.claude.com"),
    ),
    "js-openai": (("openai/openai-node",), ("platform.openai.com",)),
    "js-openai-websocket": (
        ("openai/openai-node", "websockets/ws"),
        ("platform.openai.com", "developers.openai.com"),
    ),
    "js-ai-sdk": (("vercel/ai",), ("ai-sdk.dev",)),
    "js-ai-sdk-openai-compatible": (("vercel/ai",), ("ai-sdk.dev",)),
    "js-google-genai": (("googleapis/js-genai",), ("googleapis.github.io", "ai.google.dev")),
    # pi-mono moved to earendil-works/pi (the repository of the @earendil-works/pi-ai successor).
    "js-pi-ai": (("badlogic/pi-mono", "earendil-works/pi", *_JS_SDKS), ()),
    "js-langchain": (
        ("langchain-ai/langchainjs", *_JS_SDKS),
        ("js.langchain.com", "docs.langchain.com"),
    ),
    # The JS clients on Vertex AI (issue 28): each row's library, and Google's Vertex docs.
    "js-google-genai-vertex": (
        ("googleapis/js-genai",),
        ("googleapis.github.io", "ai.google.dev", "cloud.google.com"),
    ),
    "js-anthropic-vertex-sdk": (
        ("anthropics/anthropic-sdk-typescript",),
        ("docs.anthropic.com", "platform.claude.com", "cloud.google.com"),
    ),
    "js-ai-sdk-vertex": (("vercel/ai",), ("ai-sdk.dev", "cloud.google.com")),
    "js-pi-ai-vertex": (("badlogic/pi-mono", "earendil-works/pi", *_JS_SDKS), ()),
    # Gateways (harness/stream_harness/adapters/gateways): every row of one gateway cites the gateway's tracker. The
    # LiteLLM proxy runs the litellm library's code, whose bugs are then the row's bugs.
    "litellm-proxy": (("BerriAI/litellm",), ("docs.litellm.ai",)),
    "portkey": (("Portkey-AI/gateway",), ("portkey.ai",)),
}
PROVIDERS: tuple[str, ...] = ("ollama/ollama",)

# A specific thread or a line of code: issues/N, pull/N, discussions/N, blob/<ref>/<path>.
_SPECIFIC = re.compile(r"^/([^/]+/[^/]+)/(issues/\d+|pull/\d+|discussions/\d+|blob/.+)$")


def _adapters() -> list[str]:
    names = sorted(adapter_from_file_name(p.name) for p in expectations_dir().glob("*.yaml"))
    assert names, "no expectation files found"
    return names


def family(adapter: str) -> str:
    """The ``FAMILY`` key of ``adapter``: a gateway row's gateway, else the adapter itself."""
    return adapter.partition("[")[0]


def link_problem(adapter: str, link: str) -> str | None:
    """Why ``link`` is no valid citation for a known failure of ``adapter`` (None: it is)."""
    if link.startswith(FINDINGS):
        return None if (REPO_ROOT / link).is_file() else "finding file does not exist"
    url = urlparse(link)
    if url.scheme != "https" or not url.netloc:
        return "neither a finding under conformance_report/findings/ nor an https URL"
    repos, hosts = FAMILY[family(adapter)]
    if url.netloc != "github.com":
        return (
            None
            if url.netloc in hosts
            else f"documentation host {url.netloc} not listed for {adapter}"
        )
    m = _SPECIFIC.match(url.path.rstrip("/"))
    if m is None:
        return "a tracker front page or repository root, not a specific issue, PR or line"
    if m.group(1).lower() not in {r.lower() for r in (*repos, *PROVIDERS)}:
        return f"repository {m.group(1)} is not in {adapter}'s library family"
    return None


def test_family_map_covers_every_adapter() -> None:
    assert {family(a) for a in _adapters()} <= set(FAMILY)
    assert set(THIRD_PARTY) | set(BUILTIN) | set(GATEWAYS) == set(FAMILY)


@pytest.mark.parametrize(
    ("adapter", "link", "problem"),
    [
        ("js-pi-ai", "https://github.com/badlogic/pi-mono/issues", "front page"),
        ("js-pi-ai", "https://github.com/badlogic/pi-mono/issues/", "front page"),
        ("litellm", "https://github.com/BerriAI/litellm/pulls", "front page"),
        ("litellm", "https://github.com/BerriAI/litellm", "front page"),
        (
            "anthropic-sdk",
            "https://github.com/anthropics/anthropic-sdk-typescript/issues/12",
            "family",
        ),
        ("js-openai", "https://github.com/openai/openai-python/pull/3901", "family"),
        ("llm", f"{FINDINGS}no-such-finding.md", "does not exist"),
        ("llm", "https://example.com/x", "not listed"),
        ("llm", "https://github.com/simonw/llm/issues/1689", None),
        ("js-langchain", "https://github.com/openai/openai-node/issues/1", None),
        ("openai-sdk", "https://github.com/ollama/ollama/issues/15457", None),
        ("llm", f"{FINDINGS}llm-truncated-stream.md", None),
        (
            "litellm-proxy[anthropic-messages->openai-completions]",
            "https://github.com/BerriAI/litellm/issues",
            "front page",
        ),
        (
            "litellm-proxy[anthropic-messages->openai-completions]",
            "https://github.com/BerriAI/litellm/issues/42085",
            None,
        ),
        (
            "portkey[google-generative-ai->openai-completions]",
            "https://github.com/BerriAI/litellm/issues/42085",
            "family",
        ),
        ("portkey[google-generative-ai->openai-completions]", "https://portkey.ai/docs/x", None),
        (
            "portkey[google-generative-ai->openai-completions]",
            "https://docs.litellm.ai/docs/x",
            "not listed",
        ),
    ],
)
def test_link_rules(adapter: str, link: str, problem: str | None) -> None:
    got = link_problem(adapter, link)
    assert (got is None) if problem is None else (got is not None and problem in got)


@pytest.mark.parametrize("adapter", _adapters())
def test_every_known_failure_links_a_specific_issue_or_finding(adapter: str) -> None:
    bad = [
        f"{k.check} {k.case}: {k.issue} ({problem})"
        for k in expectations_for(adapter).known
        if (problem := link_problem(adapter, k.issue)) is not None
    ]
    assert not bad, "\n".join(bad)


def test_every_finding_is_in_the_findings_index() -> None:
    """A finding nobody can find from the index is not ready to file."""
    folder = REPO_ROOT / FINDINGS
    index = (folder / "README.md").read_text(encoding="utf-8")
    unlisted = sorted(
        p.name for p in folder.glob("*.md") if p.name != "README.md" and f"]({p.name})" not in index
    )
    assert unlisted == []
