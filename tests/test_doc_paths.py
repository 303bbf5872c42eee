"""Every repository path that the README, the specs and the ``--help`` texts cite exists.

A moved module leaves stale paths in prose that no import checks; users follow them.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from stream_harness.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
TOP = (
    "harness",
    "specs",
    "cassettes",
    "tests",
    "benchmarks",
    "conformance_report",
    "adapters-js",
    ".ci",
)
PATH = re.compile(
    r"(?<![\w/.~-])((?:" + "|".join(re.escape(t) for t in TOP) + r")/[\w./-]*[\w/])([-_]*[*<{])?"
)
# Paths that stand for a user's project or a generated file, not for this repository.
USER_FILES = (
    "cassettes/openai-completions/example_tool_call",
    "cassettes/scenarios/nowhere.yaml",  # error messages shown as examples
    "cassettes/scenarios/x.yaml",
    "cassettes/openai-completions/broken.yaml",
    "tests/test_stream_harness.py",
    "tests/test_agent.py",  # what `init --agent` writes
    "specs/expected/anthropic-messages/weather_tool_call",
    "cassettes/anthropic-messages/weather_tool_call",
    "benchmarks/results/",
    "cassettes/openai-completions/mine",
)
# Paths in other projects' repositories, cited as sources.
UPSTREAM = ("tests/backend/data/",)
DOCS = sorted(
    [ROOT / "README.md", *(ROOT / "specs").rglob("*.md"), ROOT / "benchmarks" / "README.md"]
)


def cited(text: str) -> set[str]:
    """Repository paths in ``text``; a path cut by a wildcard (``tests/test_corpus_*.py``)
    ends in ``*`` and stands for every path with that prefix."""
    return {m.group(1).rstrip(".") + ("*" if m.group(2) else "") for m in PATH.finditer(text)}


def _exists(path: str) -> bool:
    if path.endswith("*"):
        prefix = path[:-1]
        folder = ROOT / prefix.rpartition("/")[0]
        return folder.is_dir() and any(
            str(p.relative_to(ROOT)).startswith(prefix) for p in folder.iterdir()
        )
    return (ROOT / path).exists()


def missing(paths: set[str]) -> list[str]:
    return sorted(
        p
        for p in paths
        if not _exists(p)
        and not p.startswith(USER_FILES)
        and not p.startswith(UPSTREAM)
        and not p.endswith("/my_case.yaml")  # the README's walk-through of adding a cassette
    )


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_a_document_cites_exists(doc: Path) -> None:
    assert not missing(cited(doc.read_text(encoding="utf-8")))


def _help_texts() -> str:
    parser = build_parser()
    texts = [parser.format_help()]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            texts.extend(sub.format_help() for sub in action.choices.values())
    return "\n".join(texts)


def test_every_path_the_help_cites_exists() -> None:
    # argparse wraps at a hyphen: ``~/.cache/stream-`` and ``harness/matrix`` on two lines.
    text = re.sub(r"-\n\s+", "-", _help_texts())
    assert "check" in text  # the subcommands' help was read
    assert not missing(cited(text))


def test_the_readme_was_read() -> None:
    assert "harness/stream_harness/contract/events.py" in cited(
        (ROOT / "README.md").read_text(encoding="utf-8")
    )
