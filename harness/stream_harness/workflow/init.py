"""``stream-harness init``: the first five minutes in a user's own project.

It writes what the README's "In your own CI" walks through, into the current folder (or
``--dir``): a ``[tool.stream-harness]`` table, a cassette with its reviewed expected events,
an adapter stub that passes the suite as it stands (it delegates to the reference until
the user puts their own stream handling in), and a test file using the pytest plugin.
An existing file is never overwritten; the command says what it left alone.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from stream_harness.contract.facts import bundled_cassettes
from stream_harness.recordings.golden import expected_path
from stream_harness.workflow.init_agent import init_agent

EXAMPLE = ("openai-completions", "tool_call_single")

TABLE = """
[tool.stream-harness]
# Read by `stream-harness check/report/matrix`, `pytest --harness` and run_conformance().
cassettes = ["cassettes"]
adapters = ["stream_adapter:MyAdapter"]
expectations = "stream_expectations"
examples = 100
out = "conformance_report"
"""

ADAPTER = '''"""The adapter stream-harness checks: your stream handling behind one small protocol.

Replace the body of ``run`` with your client's code: feed it ``chunks`` (the recorded
response body, cut where the harness chose) and return the unified events, or only the
final message with ``level = "message"``. As scaffolded it delegates to the reference
normalizer, so the suite passes before you change anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from stream_harness import AdapterResult, ReferenceAdapter


class MyAdapter:
    name = "my-adapter"
    level: Literal["event", "message"] = "event"
    protocols = frozenset({"anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"})

    def version(self) -> str:
        return "0.0.0"

    def run(
        self,
        protocol: str,
        chunks: Sequence[bytes],
        *,
        status: int = 200,
        headers: Mapping[str, Sequence[str]] | None = None,
    ) -> AdapterResult:
        return ReferenceAdapter().run(protocol, chunks, status=status, headers=headers)
'''

TEST = '''"""stream-harness on this project: the conformance suite on our adapter, and our own
client test over our cassettes, re-chunked."""

from __future__ import annotations

import pytest

from stream_harness import normalize, run_conformance


def test_my_adapter_conforms() -> None:
    # Cassettes, examples and expectations come from [tool.stream-harness] in this project's
    # pyproject.toml (the one above this file, wherever pytest is started from);
    # the adapter is named as on the command line, so failures print commands to paste.
    run_conformance("stream_adapter:MyAdapter")


@pytest.mark.harness_cassettes("../cassettes")
def test_any_chunking_gives_the_same_events(harness_cassette, harness_chunks) -> None:
    whole = list(normalize("openai-completions", [harness_cassette.response.body]))
    chunked = list(normalize("openai-completions", harness_chunks))
    assert chunked == whole
'''

EXPECTATIONS_README = """Known failures of an adapter, one file per adapter name: <name>.yaml
(a "->" in the name is spelled "--to--", so that the file name is valid on Windows).
Each entry names the check, the case (glob) and the upstream issue; see the
stream-harness README ("Known failures"). A report tells these from new failures.
"""


# A pyproject.toml written from scratch must still install (`pip install -e .`): the
# scaffold's data folders (cassettes/, stream_expectations/) beside a top-level module would
# otherwise meet setuptools' automatic discovery as several top-level packages, an error.
NEW_PYPROJECT = """[project]
name = "{name}"
version = "0.0.0"

[tool.setuptools]
# What this project installs; cassettes/ and stream_expectations/ are data, not packages.
py-modules = ["stream_adapter"]
"""


def _project_name(root: Path) -> str:
    """A valid distribution name from the folder's name (PEP 508), else ``my-project``."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", root.resolve().name).strip("-._")
    return name or "my-project"


def _discovers_packages(pyproject: str) -> bool:
    """Whether setuptools' automatic discovery builds this project (nothing says otherwise)."""
    backend = re.search(r'^build-backend\s*=\s*"([^"]+)"', pyproject, re.M)
    uses_setuptools = backend is None or backend.group(1).startswith("setuptools")
    return "[project]" in pyproject and uses_setuptools and "[tool.setuptools" not in pyproject


def add_init_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "init",
        help="scaffold stream-harness in your project: config, a cassette, an adapter stub, a test",
    )
    p.add_argument("--dir", default=".", help="the project folder (default: the current one)")
    p.add_argument(
        "--agent",
        action="store_true",
        help="scaffold an agent test instead: a small openai-client agent (agent_app.py) and "
        "tests/test_agent.py running it on the bundled agent scenarios (needs `pip install openai`)",
    )
    p.set_defaults(func=init_command)


def init_command(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    if not root.is_dir():
        print(f"stream-harness: {root}: no such folder", file=sys.stderr)
        return 2
    if args.agent:
        _write(init_agent(root))
        print(
            "next: `pytest tests/test_agent.py` judges agent_app.py (put your agent's import there); "
            '`stream-harness agents --app "python agent_app.py"` runs it as a program'
        )
        return 0
    protocol, stem = EXAMPLE
    source = bundled_cassettes() / protocol / f"{stem}.yaml"
    cassette = root / "cassettes" / protocol / "example_tool_call.yaml"
    files: list[tuple[Path, str]] = [
        (cassette, source.read_text(encoding="utf-8")),
        (expected_path(cassette, 0), expected_path(source, 0).read_text(encoding="utf-8")),
        (root / "stream_adapter.py", ADAPTER),
        (root / "tests" / "test_stream_harness.py", TEST),
        (root / "stream_expectations" / "README.txt", EXPECTATIONS_README),
    ]
    _write(files)
    pyproject = root / "pyproject.toml"
    current = pyproject.read_text(encoding="utf-8") if pyproject.is_file() else None
    if current is not None and "[tool.stream-harness]" in current:
        print(f"left alone (has [tool.stream-harness]): {pyproject}")
    else:
        head = current if current is not None else NEW_PYPROJECT.format(name=_project_name(root))
        pyproject.write_text(head.rstrip("\n") + "\n" + TABLE, encoding="utf-8")
        print(
            f"{'added [tool.stream-harness] to' if current is not None else 'created'}: {pyproject}"
        )
        if current is not None and _discovers_packages(current):
            print(
                "note: cassettes/ and stream_expectations/ are data folders; if setuptools finds this "
                "project's packages automatically, list yours ([tool.setuptools] packages) or exclude "
                "them ([tool.setuptools.packages.find] exclude), or `pip install -e .` sees several "
                "top-level packages"
            )
    print(
        "next: `pytest` runs tests/test_stream_harness.py; `stream-harness check` runs the suite from the shell"
    )
    return 0


def _write(files: list[tuple[Path, str]]) -> None:
    for path, text in files:
        if path.exists():
            print(f"left alone (exists): {path}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"created: {path}")
