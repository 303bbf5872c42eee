"""Agent runs in several jobs: the same observations, in order, whatever the jobs can do."""

from __future__ import annotations

from stream_harness.agents.conformance.runner import observe_in_jobs, planned_units
from stream_harness.agents.protocol import AgentAdapter
from stream_harness.agents.reference import ReferenceAgent
from stream_harness.agents.scenario.model import load_agent_scenario
from stream_harness.contract.facts import bundled_cassettes

FOLDER = bundled_cassettes() / "agent-scenarios"


def _units() -> list[tuple[str, AgentAdapter, object, str]]:
    scenarios = [
        load_agent_scenario(FOLDER / f"{n}.yaml")
        for n in ("weather_tool_call", "retry_after_payment", "parallel_tool_calls")
    ]
    return planned_units([("reference", ReferenceAgent())], scenarios, ["openai-completions"])  # type: ignore[return-value]


def test_a_job_that_cannot_make_its_adapter_leaves_the_work_to_the_others() -> None:
    made: list[str] = []

    def refuse(spec: str) -> AgentAdapter:
        made.append(spec)
        raise RuntimeError("one instance only")

    units = _units()
    runs = observe_in_jobs(units, 3, refuse, None)  # type: ignore[arg-type]
    assert [(r.scenario.name, r.protocol) for r in runs] == [
        (u[2].name, u[3])
        for u in units  # type: ignore[attr-defined]
    ]
    assert all(r.crash is None and r.outcome is not None for r in runs)
    assert made and set(made) == {"reference"}  # tried, refused, and the run went on


def test_spawned_adapters_run_units_and_are_closed() -> None:
    made: list[int] = []
    closed: list[int] = []

    class Closing(ReferenceAgent):
        def close(self) -> None:
            closed.append(id(self))

    def spawn(spec: str) -> AgentAdapter:
        adapter = Closing()
        made.append(id(adapter))
        return adapter

    units = _units()
    runs = observe_in_jobs(units, 2, spawn, None)  # type: ignore[arg-type]
    assert len(runs) == len(units) and all(r.outcome is not None for r in runs)
    # Each job made at most one adapter of its own, and every one made was closed; the
    # caller's own adapter (the first job's) is left to the caller.
    assert len(made) <= 1 and sorted(closed) == sorted(made)
