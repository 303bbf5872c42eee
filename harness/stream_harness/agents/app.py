"""App mode: the user's own program, unchanged, run once per (scenario, protocol).

An adapter class is a cost every peer tool avoids: llmock runs an agent as it is, pointing
the official SDKs at its server through their documented environment variables. So does
this: :class:`AppAdapter` runs a shell command with each SDK's base-URL and key variables
set to the scenario server (specs/app_env.yaml, each with its source), the prompt in
``STREAM_HARNESS_PROMPT`` (or ``{prompt}`` in the command), and the ledger's URL in
``STREAM_HARNESS_LEDGER_URL`` for the program's tools to report their runs
(:mod:`stream_harness.agents.tool_runs`). The outcome is the exit status and the output;
the verdicts come, as for any row, from what the server saw. Any language works.

The calls the scenarios script are bound to the tools the program offers
(:mod:`stream_harness.agents.binding`), so the bundled scenarios run on any agent.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from stream_harness.agents.binding import ToolBinding
from stream_harness.agents.protocol import AgentOutcome, AgentTask
from stream_harness.agents.scenario.render import PROTOCOLS
from stream_harness.agents.server import LEDGER_PATH, AgentServer
from stream_harness.contract.facts import load_yaml
from stream_harness.server.upstream import protocol_of_path

PROMPT_FIELD: Final = "{prompt}"
OUTPUT_LIMIT: Final = 4000  # characters of output kept in the outcome (the tail)


class AppError(ValueError):
    """App mode cannot start (a command that sends no request, in a protocol not served)."""


def app_environment(
    url: str, *, prompt: str, protocol: str, scenario: str, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``base`` (the process's environment) with every SDK pointed at ``url``: the variables
    of specs/app_env.yaml set, those an SDK would prefer removed."""
    table = load_yaml("app_env")
    env = dict(os.environ if base is None else base)
    values = {"url": url.rstrip("/"), "prompt": prompt, "protocol": protocol, "scenario": scenario}
    for sdk in table["sdks"].values():
        for name in sdk.get("unset") or ():
            env.pop(name, None)
        for name, value in sdk["set"].items():
            env[name] = str(value).format(**values)
    for name, value in table["harness"].items():
        env[name] = str(value).format(**values)
    return env


def app_variables() -> list[tuple[str, str, str]]:
    """(SDK, variable, source) for every variable app mode sets: the README's table."""
    table = load_yaml("app_env")
    return [
        (sdk, name, entry["source"])
        for sdk, entry in table["sdks"].items()
        for name in entry["set"]
    ]


def command_for(command: str, prompt: str) -> list[str]:
    """The argv that runs ``command`` through the shell, ``{prompt}`` quoted in."""
    return ["/bin/sh", "-c", command.replace(PROMPT_FIELD, shlex.quote(prompt))]


def _tail(text: str) -> str:
    return text if len(text) <= OUTPUT_LIMIT else text[-OUTPUT_LIMIT:]


# The line a runtime prints for an uncaught exception: Python's traceback ends with it, Node's
# comes before the stack and a closing "Node.js vNN" line, so the last line alone would say
# nothing of what the program saw (check A12 reads this message for the error served).
_EXCEPTION_LINE = re.compile(r"^(?:Uncaught )?[\w.$]*(?:Error|Exception|Exit|Interrupt)\b.*\S")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    raised = [line for line in lines if _EXCEPTION_LINE.match(line)]
    if raised and raised[-1] != lines[-1]:
        return f"{raised[-1]} ({lines[-1]})"
    return lines[-1]


def run_program(
    command: str, env: Mapping[str, str], *, prompt: str, timeout: float, cwd: Path | None
) -> AgentOutcome:
    """Run the program to its end: exit 0 is an answer (its output), any other status is
    the run raising (the last line of its error output says what). A program past
    ``timeout`` is killed with its children and the run is a crash (TimeoutError)."""
    process = subprocess.Popen(
        command_for(command, prompt),
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,  # its own process group: a timeout kills its children too
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise TimeoutError(f"the program ran past {timeout:g} s and was killed") from None
    raw: dict[str, Any] = {"exit_status": process.returncode, "stderr": _tail(err)}
    if process.returncode == 0:
        return AgentOutcome(output=_tail(out), raw=raw)
    return AgentOutcome(
        output=_tail(out) or None,
        error_type=f"exit status {process.returncode}",
        error_message=_last_line(err) or _last_line(out) or "(no output)",
        raw=raw,
    )


@dataclass
class AppAdapter:
    """The user's program as an agent row: ``stream-harness agents --app CMD``.

    It declares no conventions (the row is held to the official SDKs' defaults: two
    retries, retry-after honoured up to 60 s); ``tool_binding`` binds the scenarios' calls
    to the program's own tools.
    """

    command: str
    protocols: frozenset[str]
    tool_binding: ToolBinding = field(default_factory=ToolBinding)
    cwd: Path | None = None
    name: str = "app"
    conventions: Mapping[str, Any] = field(default_factory=dict)
    settings: str = "the program as it is; SDK base URLs and keys from the environment"
    user_agent: str = ""  # the probe's: the client and version the report shows

    def version(self) -> str:
        return self.user_agent or "unknown (no probe run)"

    def run_agent(self, task: AgentTask) -> AgentOutcome:
        env = app_environment(
            task.base_url, prompt=task.prompt, protocol=task.protocol, scenario=task.scenario
        )
        return run_program(
            self.command, env, prompt=task.prompt, timeout=task.limits.timeout_s, cwd=self.cwd
        )


def served_protocol(path: str) -> str | None:
    """The scenario protocol a request path asks for: Azure's deployments speak OpenAI's."""
    found = protocol_of_path(path)
    if found is not None and found.startswith("azure-openai-"):
        found = found.replace("azure-", "", 1)
    if found is None and path.rstrip("/").endswith("/chat/completions"):
        found = "openai-completions"
    return found


@dataclass(frozen=True, slots=True)
class Probe:
    """What one run of the program against a silent server told: the protocol its first
    request asks for and the client that sent it (None: not one of specs/app_env.yaml's)."""

    protocol: str
    client: str | None
    user_agent: str = ""


def client_of(user_agent: str) -> str | None:
    """The clients entry of specs/agent_conventions.yaml a user-agent names (app_env.yaml)."""
    for entry in load_yaml("app_env")["clients"]:
        if re.search(entry["user_agent"], user_agent):
            return str(entry["client"])
    return None


def client_conventions(client: str | None) -> dict[str, Any]:
    """The policy the app row declares: its client's, as a framework row built on that
    client declares it (specs/agent_conventions.yaml ``clients``); none when unknown."""
    if client is None:
        return {}
    policy = dict(load_yaml("agent_conventions")["clients"][client])
    return {**policy, "client": client}


def detect_protocol(command: str, *, cwd: Path | None, timeout: float) -> Probe:
    """Run the program once against a server with nothing to say and read which protocol
    its first request asks for; every problem is one line (:class:`AppError`)."""
    with AgentServer([], []) as server:
        env = app_environment(server.url, prompt="Hello", protocol="", scenario="probe")
        try:
            outcome = run_program(command, env, prompt="Hello", timeout=timeout, cwd=cwd)
        except TimeoutError:
            outcome = None
        hits = [h for h in server.requests if not h.path.startswith(LEDGER_PATH)]
    paths = [h.path for h in hits]
    if not paths:
        said = (
            f" ({outcome.error_type}: {outcome.error_message})"
            if outcome and outcome.raised
            else ""
        )
        raise AppError(
            f"--app: the program sent no model request{said}; does its SDK read the variables "
            "of specs/app_env.yaml (a client built with an explicit base_url ignores them)?"
        )
    protocol = served_protocol(paths[0])
    if protocol not in PROTOCOLS:
        raise AppError(
            f"--app: the program's first request was POST {paths[0]}, which is none of the "
            f"served protocols ({', '.join(PROTOCOLS)}); name one with --protocol"
        )
    user_agent = hits[0].headers.get("user-agent", "")
    return Probe(protocol, client_of(user_agent), user_agent)
