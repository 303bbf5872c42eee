"""One line in the user's own tool to report its run to the scenario server's ledger.

The harness sees an agent's tools only through the ledger (agents/server.py). An agent run
by app mode or the pytest fixture keeps its own tools, so each reports its run itself:
``record_tool_run(name, arguments)`` or ``@side_effect`` on the tool. Both do nothing
outside a run (``STREAM_HARNESS_LEDGER_URL`` unset), so they stay in production code. A
program in another language POSTs ``{"tool": NAME, "arguments": {...}}`` to that URL.

When the scenario scripts a failure for this run of the tool (``tool_raises``), the call
raises :class:`~stream_harness.agents.protocol.ToolFailed` before the tool's body runs,
so the agent meets a failing tool as it would in production.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar, overload

from stream_harness.agents.protocol import ToolFailed

LEDGER_ENV: Final = "STREAM_HARNESS_LEDGER_URL"

F = TypeVar("F", bound=Callable[..., Any])


def record_tool_run(name: str, arguments: Mapping[str, Any] | None = None) -> None:
    """Report one run of tool ``name`` with ``arguments`` (what the model sent); a no-op
    outside a run. Raises :class:`ToolFailed` when the scenario scripts this run to fail."""
    url = os.environ.get(LEDGER_ENV)
    if not url:
        return
    body = json.dumps({"tool": name, "arguments": dict(arguments or {})}, default=str).encode()
    request = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            answer = json.loads(reply.read() or b"{}")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        # The run goes on (a reporting problem must not change the agent's behaviour); the
        # missing execution shows in the verdict (the wiring check, A1, A2).
        print(f"stream-harness: could not report {name} to {url}: {exc}", file=sys.stderr)
        return
    if isinstance(answer, dict) and answer.get("error"):
        raise ToolFailed(str(answer["error"]))


@overload
def side_effect(fn: F) -> F: ...
@overload
def side_effect(*, name: str) -> Callable[[F], F]: ...
def side_effect(fn: Any = None, *, name: str | None = None) -> Any:
    """Decorate a tool function (sync or async) so every call reports itself first, under
    the function's name or ``name``, its arguments bound by parameter name."""

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        tool = name or func.__name__
        signature = inspect.signature(func)

        def arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return dict(kwargs)
            out = dict(bound.arguments)
            for param in signature.parameters.values():
                if param.kind is inspect.Parameter.VAR_KEYWORD and param.name in out:
                    out.update(out.pop(param.name))
            out.pop("self", None)
            return out

        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                record_tool_run(tool, arguments(args, kwargs))
                return await func(*args, **kwargs)

            return run_async

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            record_tool_run(tool, arguments(args, kwargs))
            return func(*args, **kwargs)

        return run

    return wrap(fn) if fn is not None else wrap
