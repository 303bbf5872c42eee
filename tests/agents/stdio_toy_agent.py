"""A stdio agent for the tests: speaks the agent messages, runs the reference loop inside.

Started as a separate process (``cmd:python tests/agents/stdio_toy_agent.py``), so the
protocol is exercised end to end: the handshake, one ``agent_run`` per run, the tools'
ledger calls made from the other process. ``--broken`` answers every run out of step;
``--hang PIDFILE`` starts a child, writes both pids to PIDFILE and never answers the first
run; ``--pids FILE`` appends each process's pid; ``--exit`` exits in the middle of the first run (a crashed runtime). Each flag acts
once per file of state beside PIDFILE / on the first run only, so the restarted process
behaves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from stream_harness.agents.protocol import AgentLimits, AgentTask, AgentTool
from stream_harness.agents.reference import ReferenceAgent


def misbehave() -> None:
    """The first run of the first process hangs or dies, as --hang / --exit ask."""
    if "--hang" in sys.argv:
        pidfile = Path(sys.argv[sys.argv.index("--hang") + 1])
        if not pidfile.exists():
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
            pidfile.write_text(f"{os.getpid()} {child.pid}")
            time.sleep(300)
    if "--exit" in sys.argv:
        marker = Path(sys.argv[sys.argv.index("--exit") + 1])
        if not marker.exists():
            marker.write_text("exited")
            os._exit(3)


def main() -> None:
    broken = "--broken" in sys.argv
    if "--pids" in sys.argv:  # each process started appends its pid: jobs are counted
        with open(sys.argv[sys.argv.index("--pids") + 1], "a") as pids:
            pids.write(f"{os.getpid()}\n")
    agent = ReferenceAgent()
    for line in sys.stdin:
        message = json.loads(line)
        if message["cmd"] == "agent_start":
            reply = {
                "kind": "agent_started",
                "version": 1,
                "name": "toy-stdio",
                "framework_version": "0.1",
                "protocols": sorted(agent.protocols),
                "conventions": {
                    **agent.conventions,
                    # --over-cap VALUE: a declared policy, valid or not (the harness checks it)
                    **(
                        {"retry_after_over_cap": sys.argv[sys.argv.index("--over-cap") + 1]}
                        if "--over-cap" in sys.argv
                        else {}
                    ),
                    # --conventions JSON: any declared keys, known or not
                    **(
                        json.loads(sys.argv[sys.argv.index("--conventions") + 1])
                        if "--conventions" in sys.argv
                        else {}
                    ),
                },
                "settings": agent.settings,
            }
        elif message["cmd"] == "agent_run":
            misbehave()
            t = message["task"]
            task = AgentTask(
                scenario=t["scenario"],
                protocol=t["protocol"],
                base_url=t["base_url"],
                model=t["model"],
                prompt=t["prompt"],
                system=t["system"],
                tools=tuple(
                    AgentTool(x["name"], x["description"], x["parameters"], x["ledger_url"])
                    for x in t["tools"]
                ),
                limits=AgentLimits(**t["limits"]),
            )
            print("console noise from the framework")  # skipped by the harness
            outcome = agent.run_agent(task)
            reply = {
                "kind": "agent_outcome",
                "seq": message["seq"] + (1 if broken else 0),
                "output": outcome.output,
                "error_type": outcome.error_type,
                "error_message": outcome.error_message,
            }
        else:
            return
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
