"""``stream-harness init --agent``: the scaffolded agent test passes before any edit, and
its fault tests fail once the scaffolded agent gets a planted bug (so they judge it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stream_harness.cli.main import main


def _pytest(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAM_HARNESS")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *argv],
        cwd=project, capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip


def test_init_agent_scaffolds_a_test_that_passes_and_judges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "--agent", "--dir", str(tmp_path)]) == 0
    assert "created" in capsys.readouterr().out
    assert main(["init", "--agent", "--dir", str(tmp_path)]) == 0
    assert "left alone (exists)" in capsys.readouterr().out
    test_lines = (tmp_path / "tests" / "test_agent.py").read_text().strip().splitlines()
    assert len(test_lines) <= 16
    done = _pytest(
        tmp_path, "tests/test_agent.py", "-k", "one_line_faults", "-n", "2"
    )  # ids agree across workers
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    app = tmp_path / "agent_app.py"
    # the retry-after bug: the client's own retries off, the agent's loop retrying at once
    app.write_text(app.read_text().replace("openai.OpenAI()", "openai.OpenAI(max_retries=0)"))
    failed = _pytest(tmp_path, "tests/test_agent.py", "-k", "one_line_faults and retry_after")
    assert failed.returncode == 1
    assert "A9 retryable errors are retried" in failed.stdout
