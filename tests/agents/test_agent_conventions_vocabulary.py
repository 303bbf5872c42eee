"""A row's conventions are held to one vocabulary wherever they are declared.

The checks read a policy by key and fall back to a default when it is absent, so before
this a misspelt key (``max_retry``) was read as "not declared" and the row was judged by
the default, silently. Every place a row declares conventions refuses it now, in one
line with the near miss named: the bundled file, a stdio agent's handshake and a
``module:object`` adapter.
"""

from __future__ import annotations

import copy
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stream_harness.agents.conformance.checks import DEFAULT_CONVENTIONS
from stream_harness.agents.conventions import KINDS, conventions_problem, vocabulary
from stream_harness.agents.frameworks import support
from stream_harness.agents.frameworks.support import conventions_for
from stream_harness.agents.loading import AgentLoadError, load_agent
from stream_harness.contract.facts import load_yaml

TOY = Path(__file__).with_name("stdio_toy_agent.py")


def _bundled_file(declared: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    table = copy.deepcopy(load_yaml("agent_conventions"))
    table["frameworks"]["strands"]["conventions"].update(declared)
    monkeypatch.setattr(support.facts, "load_yaml", lambda name: table)
    with pytest.raises(support.ConventionsError) as caught:
        conventions_for("agno")  # any row: the whole file is refused
    return str(caught.value)


def _stdio_agent(declared: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    argv = [sys.executable, str(TOY), "--conventions", json.dumps(declared)]
    with pytest.raises(AgentLoadError) as caught:
        load_agent("cmd:" + shlex.join(argv))
    return str(caught.value)


def _module_object(
    declared: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> str:
    (tmp_path / "declaring_agent.py").write_text(
        "from stream_harness.agents.reference import ReferenceAgent\n\n"
        "class Declaring(ReferenceAgent):\n"
        "    def __init__(self) -> None:\n"
        "        super().__init__()\n"
        f"        self.conventions = {{**self.conventions, **{declared!r}}}\n"
    )
    monkeypatch.delitem(sys.modules, "declaring_agent", raising=False)  # each case its own
    with pytest.raises(AgentLoadError) as caught:
        load_agent("declaring_agent:Declaring", tmp_path)
    return str(caught.value)


PLACES: dict[str, Callable[[dict[str, Any], pytest.MonkeyPatch, Path], str]] = {
    "bundled file": _bundled_file,
    "stdio agent": _stdio_agent,
    "module:object": _module_object,
}


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize(
    ("declared", "words"),
    [
        (
            {"max_retry": 1},
            "unknown conventions key 'max_retry' (did you mean 'max_retries'? known: ",
        ),
        ({"max_retries": "two"}, ".max_retries is 'two', not a whole number >= 0"),
        (
            {"retry_after_cap_s": -5},
            ".retry_after_cap_s is -5, not a number of seconds >= 0 or null",
        ),
        (
            {"retried_statuses": ["429"]},
            ".retried_statuses is ['429'], not a list of HTTP statuses or null",
        ),
    ],
)
def test_a_key_or_value_outside_the_vocabulary_is_refused_in_one_line(
    place: str,
    declared: dict[str, Any],
    words: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    message = PLACES[place](declared, monkeypatch, tmp_path)
    assert words in message and "\n" not in message


def test_every_key_a_check_reads_is_in_the_vocabulary_and_marked_read() -> None:
    read = {key for key, entry in vocabulary().items() if entry["read_by"]}
    assert read == set(DEFAULT_CONVENTIONS)


def test_every_kind_the_vocabulary_names_is_one_the_validation_knows() -> None:
    for key, entry in vocabulary().items():
        kind = entry["value"]
        assert isinstance(kind, list) or kind in KINDS, key


def test_every_bundled_row_and_its_per_protocol_policies_pass() -> None:
    for name in load_yaml("agent_conventions")["frameworks"]:
        assert conventions_problem(conventions_for(name)) is None, name


def test_a_per_protocol_policy_is_checked_too() -> None:
    problem = conventions_problem(
        {"by_protocol": {"anthropic-messages": {"retry_after_honored": False}}}
    )
    assert problem is not None
    assert problem.startswith("conventions.by_protocol.anthropic-messages: unknown conventions key")
    assert "did you mean 'retry_after_honoured'?" in problem
