"""Tool specs, validation, doom-loop identity and the executor's batching."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_harness.loop.executor import Job, ToolExecutor
from stream_harness.loop.tools import (
    AppendTo,
    DoomLoopTracker,
    SetKeys,
    ToolSpec,
    ToolSpecError,
    canonical_input,
)

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
    "required": ["path"],
}


def test_valid_arguments_pass() -> None:
    assert ToolSpec("read", SCHEMA).validate({"path": "a", "limit": 3}) is None


def test_invalid_arguments_text_is_pis_format() -> None:
    text = ToolSpec("read", SCHEMA).validate({"limit": "5"})
    assert text == (
        'Validation failed for tool "read":\n'
        "  - root: 'path' is a required property\n"  # sorted by path, the object itself first
        "  - limit: '5' is not of type 'integer'\n"
        "\n"
        "Received arguments:\n"
        '{\n  "limit": "5"\n}'
    )


def test_validation_does_not_coerce_or_mutate() -> None:
    arguments = {"path": "a", "limit": "5", "nested": {"x": [1]}}
    before = copy.deepcopy(arguments)
    assert ToolSpec("read", SCHEMA).validate(arguments) is not None  # "5" is not coerced to 5
    assert arguments == before


def test_schema_is_checked_when_the_tool_is_made() -> None:
    with pytest.raises(ToolSpecError, match=r"tool 'bad': invalid JSON Schema at type"):
        ToolSpec("bad", {"type": "no-such-type"})


def test_draft_is_taken_from_the_schema() -> None:
    # Draft 4's boolean exclusiveMaximum is valid there and invalid in 2020-12.
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "number",
        "maximum": 5,
        "exclusiveMaximum": True,
    }
    spec = ToolSpec(
        "n", {"type": "object", "properties": {"n": draft4}, "$schema": draft4["$schema"]}
    )
    assert spec.validate({"n": 5}) is not None
    assert spec.validate({"n": 4}) is None


def test_canonical_input_ignores_key_order_only() -> None:
    assert canonical_input({"a": 1, "b": [1, 2]}) == canonical_input({"b": [1, 2], "a": 1})
    assert canonical_input({"a": [1, 2]}) != canonical_input({"a": [2, 1]})
    assert canonical_input({"a": 1}) != canonical_input({"a": 1.5})
    assert canonical_input({"a": "é"}) == '{"a":"é"}'


def test_doom_streaks() -> None:
    tracker = DoomLoopTracker()
    seen = [
        tracker.observe(name, args)
        for name, args in [
            ("s", {"q": "x"}),
            ("s", {"q": "x"}),
            ("t", {"q": "x"}),  # other tool: restart
            ("t", {"q": "x"}),
            ("t", {"q": "x"}),
            ("t", {"q": "y"}),  # other input: restart
            ("t", {"q": "y", "n": 1}),
        ]
    ]
    assert seen == [1, 2, 1, 2, 3, 1, 1]


def test_modifiers() -> None:
    assert SetKeys({"a": 1})({"a": 0, "b": 2}) == {"a": 1, "b": 2}
    assert AppendTo({"log": "x"})({}) == {"log": ["x"]}
    assert AppendTo({"log": "y"})({"log": ["x"]}) == {"log": ["x", "y"]}
    assert AppendTo({"log": "y"})({"log": "not a list"}) == {"log": ["y"]}


# -- executor ------------------------------------------------------------------------------


def cc_partition(safe: list[bool]) -> list[list[int]]:
    """Claude Code's partitionToolCalls (research/seed-systems.md C.1), on positions."""
    batches: list[list[int]] = []
    for i, s in enumerate(safe):
        if s and batches and safe[batches[-1][0]]:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def test_the_papers_example_partition() -> None:
    # C.5 check 1: [R,R,W,R,R,R,W] -> [[R,R],[W],[R,R,R],[W]]
    assert cc_partition([True, True, False, True, True, True, False]) == [
        [0, 1],
        [2],
        [3, 4, 5],
        [6],
    ]


@settings(max_examples=300, deadline=None)  # no wall-clock limits in unit tests
@given(
    safe=st.lists(st.booleans(), max_size=10),
    limit=st.integers(1, 4),
    order=st.randoms(use_true_random=False),
    eager=st.booleans(),
)
def test_executor_batches_are_claude_codes_partition(
    safe: list[bool], limit: int, order: Any, eager: bool
) -> None:
    """Whatever order tools finish in, and whether calls arrive all at once or one by one,
    the batches are the partition, at most ``limit`` run at once, an unsafe call runs alone,
    and batch k starts only after batch k-1 has finished."""
    executor = ToolExecutor(limit, {})
    batch_of: dict[str, int] = {}
    running: set[str] = set()
    finished: set[str] = set()

    def started(items: list[Any]) -> None:
        for item in items:
            key = item.job.key
            assert key not in batch_of
            batch_of[key] = item.batch
            running.add(key)
            earlier = [k for k, b in batch_of.items() if b < item.batch]
            assert all(k in finished for k in earlier), "a batch started before the previous ended"
            assert len(running) <= limit
            if not safe[int(key)]:
                assert running == {key}

    jobs = [Job(key=str(i), position=i, safe=s) for i, s in enumerate(safe)]
    if not eager:
        for job in jobs:
            started(executor.add(job))
        started(executor.close_input())
    pending = list(jobs) if eager else []
    while running or pending:
        if pending and (not running or order.random() < 0.5):
            started(executor.add(pending.pop(0)))
            if not pending:
                started(executor.close_input())
            continue
        key = order.choice(sorted(running))
        running.discard(key)
        finished.add(key)
        started(executor.finish(key))
    if not safe:
        started(executor.close_input())
    assert executor.idle
    got: dict[int, list[int]] = {}
    for key, batch in batch_of.items():
        got.setdefault(batch, []).append(int(key))
    assert [sorted(v) for _, v in sorted(got.items())] == cc_partition(safe)


def test_modifiers_apply_after_the_batch_in_call_order() -> None:
    executor = ToolExecutor(10, {"log": []})
    first = (
        executor.add(Job("a", 0, True))
        + executor.add(Job("b", 1, True))
        + executor.add(Job("c", 2, False))
    )
    assert [s.job.key for s in first] == ["a", "b"]
    assert executor.finish("b", (AppendTo({"log": "b"}),)) == []
    assert executor.context == {"log": []}  # the batch is not over
    after_a = executor.finish("a", (AppendTo({"log": "a"}),))
    assert [s.job.key for s in after_a] == ["c"]
    assert after_a[0].context == {"log": ["a", "b"]}  # call order, not completion order
    executor.close_input()
    executor.finish("c", (SetKeys({"done": True}),))
    assert executor.context == {"log": ["a", "b"], "done": True}
    assert executor.idle


def test_cancel_drops_the_open_batch_and_the_queue() -> None:
    executor = ToolExecutor(1, {})
    executor.add(Job("a", 0, True))
    executor.add(Job("b", 1, True))
    assert executor.queued == ["b"]
    assert executor.cancel() == ["a"]
    assert executor.queued == [] and executor.running == [] and executor.idle
    assert executor.finish("a", (SetKeys({"x": 1}),)) == []
    assert executor.context == {}


def test_immediate_jobs_split_safe_runs() -> None:
    executor = ToolExecutor(10, {})
    out = (
        executor.add(Job("a", 0, True))
        + executor.add(Job("bad", 1, False, immediate=True))
        + executor.add(Job("b", 2, True))
    )
    assert [(s.job.key, s.batch) for s in out] == [("a", 0)]
    out = executor.finish("a")
    assert [(s.job.key, s.batch) for s in out] == [("bad", 1), ("b", 2)]
    assert executor.running == ["b"]


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ToolExecutor(0, {})
