"""Cost of the agent loop, the stream policies and delta coalescing.

What is measured (CPU time, best of N, GC off):

- every bundled scenario (cassettes/scenarios/): load, run on virtual time, check;
- the machine's overhead per streamed event: one scripted response of 20,000 text deltas
  fed to ``AgentLoop.model_event`` (normalization excluded: the events are built first);
- tool orchestration: one response with 500 concurrency-safe calls, cap 10, finished in a
  shuffled order (seeded), per call;
- ``PolicyRunner`` with ``ToolCallJudgePolicy`` on the 20,000-delta stream, per event;
- ``CoalescingStream`` on 20,000 deltas one virtual millisecond apart, per push, and how many
  deliveries the 50 ms window leaves (about 20 per virtual second).

Run: ``python benchmarks/bench_loop.py [--out PATH] [--repeat N]``; results go to a JSON file
(default ``benchmarks/results/loop.json``) and a table on stdout.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stream_harness.contract.events import Event
from stream_harness.loop.clock import VirtualClock
from stream_harness.loop.coalesce import CoalescingStream
from stream_harness.loop.messages import UserMessage
from stream_harness.loop.policies import PolicyRunner, ToolCallJudgePolicy
from stream_harness.loop.scenario import (
    ScriptCall,
    ScriptSpec,
    check_scenario,
    find_scenarios,
    load_scenario,
    run_scenario,
    script_events,
)
from stream_harness.loop.state import AgentLoop, LoopConfig, SendRequest, StartTool
from stream_harness.loop.tools import ToolOutcome, ToolSpec

ROOT = Path(__file__).resolve().parent.parent
DELTAS = 20_000
CALLS = 500


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
        gc.enable()
    return min(times)


def long_stream() -> list[Event]:
    return script_events(ScriptSpec(text="x" * DELTAS, delta_size=1))


def stream_through_loop(events: list[Event]) -> None:
    loop = AgentLoop(LoopConfig(), [], [UserMessage(content="hi")], clock=VirtualClock())
    request = next(o for o in loop.start() if isinstance(o, SendRequest))
    for event in events:
        loop.model_event(request.request_id, event)


def many_tools() -> None:
    spec = ToolSpec(
        "read", {"type": "object", "properties": {"n": {"type": "integer"}}}, concurrency_safe=True
    )
    loop = AgentLoop(
        LoopConfig(doom_loop="allow"), [spec], [UserMessage(content="hi")], clock=VirtualClock()
    )
    request = next(o for o in loop.start() if isinstance(o, SendRequest))
    calls = [ScriptCall(id=f"c{i}", name="read", arguments={"n": i}) for i in range(CALLS)]
    running: list[str] = []
    for event in script_events(ScriptSpec(tool_calls=calls, delta_size=64)):
        running += [
            o.key for o in loop.model_event(request.request_id, event) if isinstance(o, StartTool)
        ]
    rng = random.Random(7)
    while running:
        key = running.pop(rng.randrange(len(running)))
        running += [
            o.key for o in loop.tool_finished(key, ToolOutcome(value=1)) if isinstance(o, StartTool)
        ]


def judge(events: list[Event]) -> None:
    runner = PolicyRunner(ToolCallJudgePolicy(judge=lambda call: None))
    for event in events:
        runner.feed(event)
    runner.close()


def coalesce(events: list[Event]) -> int:
    clock = VirtualClock()
    stream = CoalescingStream(clock)
    delivered = 0
    for event in events:
        clock.advance_to(clock.now() + 0.001)
        delivered += sum(1 for e in stream.poll() if e.type == "text_delta")
        delivered += sum(1 for e in stream.push(event) if e.type == "text_delta")
    return delivered


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "loop.json"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    results: dict[str, Any] = {"python": sys.version.split()[0], "platform": platform.platform()}
    scenario_times = {}
    for path in find_scenarios(ROOT / "cassettes" / "scenarios"):
        scenario_times[path.stem] = best(
            lambda p=path: check_scenario(run_scenario(load_scenario(p))), args.repeat
        )
    results["scenarios"] = {
        "count": len(scenario_times),
        "total_ms": round(sum(scenario_times.values()) * 1000, 2),
        "slowest": max(scenario_times, key=lambda k: scenario_times[k]),
        "slowest_ms": round(max(scenario_times.values()) * 1000, 2),
    }
    events = long_stream()
    t = best(lambda: stream_through_loop(events), args.repeat)
    results["loop_per_event_us"] = round(t / len(events) * 1e6, 2)
    t = best(many_tools, args.repeat)
    results["tools_per_call_us"] = round(t / CALLS * 1e6, 2)
    t = best(lambda: judge(events), args.repeat)
    results["judge_policy_per_event_us"] = round(t / len(events) * 1e6, 2)
    t = best(lambda: coalesce(events), args.repeat)
    results["coalesce_per_push_us"] = round(t / len(events) * 1e6, 2)
    deliveries = coalesce(events)
    seconds = DELTAS * 0.001
    results["coalesce_deliveries"] = {
        "deltas": DELTAS,
        "virtual_seconds": seconds,
        "delivered": deliveries,
        "per_second": round(deliveries / seconds, 2),
    }

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    for key, value in results.items():
        print(f"{key:28} {value}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
