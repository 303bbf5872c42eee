"""Agent conformance: whole agent loops driven over a loopback server with faults.

The stream adapters are judged by the message a library assembles; agent adapters are
judged one step later, by what the agent then does: which tools ran (observed through the
scenario server's ledger, whatever the language of the agent), which requests it sent,
and how the run ended. The reference loop (:mod:`stream_harness.loop`) is the oracle.

An agent's own tools report their runs with :func:`record_tool_run` or :func:`side_effect`
(no-ops outside a run), which is all app mode and the pytest fixture ask of its code.

The package is the agent half's whole path, one part a stage, each ranked right above the
stream stage it builds on (specs/architecture.md): :mod:`.scenario` (scenarios, faults,
bytes per protocol) and :mod:`.server` (the server that plays them), the agent adapters
here at the root (:mod:`.protocol`, :mod:`.frameworks`, :mod:`.stdio`, :mod:`.app`, ...),
:mod:`.conformance` (checks, runner, exploration, the pytest fixture), :mod:`.reporting`
and :mod:`.cli` (``stream-harness agents``).
"""

from stream_harness.agents.tool_runs import record_tool_run, side_effect

__all__ = ["record_tool_run", "side_effect"]
