"""The agent half's verdicts: the checks A1-A13, the runs that feed them, exploration.

As conformance/ is for the stream half: :mod:`.checks` judges one observed run
(specs/agent-contract.md), :mod:`.runner` runs each (agent, scenario, protocol) against a
fresh scenario server and applies the known failures, :mod:`.explore` draws fault
schedules and shrinks the failing ones, :mod:`.fixture` is the ``agent_scenario`` pytest
fixture over the same run.
"""
