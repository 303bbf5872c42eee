"""What every framework adapter shares: loading the framework, pointing clients, ending a run.

A framework adapter is a thin wiring module: the harness owns the model server and the
tools, so the adapter only builds the framework's agent around them. What is common to
all of them lives here once: the one-line error when a framework is not installed, the
URLs each kind of client expects, the retry conventions (data: ``specs/agent_conventions.yaml``), and
turning the framework's raise into an :class:`AgentOutcome` (only the framework's own run
is guarded; a bug in the wiring still escapes, so the runner records a crash, not a row).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import importlib
import importlib.metadata
import importlib.util
import inspect
import threading
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType
from typing import Any, ClassVar, Final, TypeVar

from stream_harness.adapters.library import LibraryMissingError
from stream_harness.agents.conventions import policy_problem
from stream_harness.agents.frameworks import REQUIRES
from stream_harness.agents.protocol import AgentOutcome, AgentRunTimedOut, AgentTask, AgentTool
from stream_harness.contract import facts

T = TypeVar("T")

CONVENTIONS: Final = "agent_conventions"


def conventions_for(name: str, configuration: str | None = None) -> dict[str, Any]:
    """An agent adapter's conventions, from ``specs/agent_conventions.yaml``.

    The top-level keys are what a check reads first: the framework's own values over the
    policy of its OpenAI client (the one most frameworks use; else its first protocol's
    client); ``by_protocol`` holds each protocol's client policy with the framework's
    overrides, because one framework on Anthropic and on Gemini retries differently.

    With ``configuration`` (a row such as ``agno[retries=1]``), the configuration's
    declared ``conventions`` go over every protocol's policy as well as the top level (a
    retry layer the user switched on sits above whichever client the protocol uses), then
    its per-protocol ``protocols`` overrides, with their sources.
    """
    table = facts.load_yaml(CONVENTIONS)
    _check_values(table)
    entry = table["frameworks"][name]
    config: dict[str, Any] = {}
    if configuration is not None:
        config = copy.deepcopy(entry["configurations"][configuration])
    config_conventions = dict(config.get("conventions") or {})
    config_sources = dict(config.get("sources") or {})
    by_protocol: dict[str, dict[str, Any]] = {}
    for protocol, client in sorted(entry["clients"].items()):
        policy = copy.deepcopy(table["clients"][client])
        override = copy.deepcopy(entry.get("protocols", {}).get(protocol, {}))
        configured = dict((config.get("protocols") or {}).get(protocol) or {})
        sources = {
            **policy.pop("sources"),
            **override.pop("sources", {}),
            **config_sources,
            **configured.pop("sources", {}),
        }
        by_protocol[protocol] = {
            **policy,
            **override,
            **config_conventions,
            **configured,
            "client": client,
            "sources": sources,
        }
    first = next(
        (by_protocol[p] for p in ("openai-completions", "openai-responses") if p in by_protocol),
        next(iter(by_protocol.values())),
    )
    base = {k: v for k, v in first.items() if k not in ("sources", "client")}
    return {
        **base,
        **entry.get("conventions", {}),
        **config_conventions,
        "sources": {**first["sources"], **entry["sources"], **config_sources},
        "by_protocol": by_protocol,
    }


class ConventionsError(ValueError):
    """``specs/agent_conventions.yaml`` declares a value no check reads; ``str()`` is one line."""


def _check_values(table: Mapping[str, Any]) -> None:
    """Refuse a key or value outside the vocabulary (``vocabulary`` in the same file),
    wherever the file declares a policy: a misspelt key would read as absent."""
    places: list[tuple[str, Mapping[str, Any], tuple[str, ...]]] = [
        (f"clients.{client}", policy, ("sources",)) for client, policy in table["clients"].items()
    ]
    for framework, entry in table["frameworks"].items():
        places.append(
            (
                f"frameworks.{framework}",
                entry,
                ("clients", "conventions", "protocols", "sources", "configurations"),
            )
        )
        places.append((f"frameworks.{framework}.conventions", entry.get("conventions") or {}, ()))
        for protocol, override in (entry.get("protocols") or {}).items():
            places.append((f"frameworks.{framework}.protocols.{protocol}", override, ("sources",)))
        for configuration, declared in (entry.get("configurations") or {}).items():
            where = f"frameworks.{framework}.configurations.{configuration}"
            places.append((where, declared, ("settings", "conventions", "protocols", "sources")))
            places.append((f"{where}.conventions", declared.get("conventions") or {}, ()))
            for protocol, override in (declared.get("protocols") or {}).items():
                places.append((f"{where}.protocols.{protocol}", override, ("sources",)))
    for where, policy, extra in places:
        problem = policy_problem(policy, where, extra=extra)
        if problem:
            raise ConventionsError(f"specs/{CONVENTIONS}.yaml: {problem}")


class FrameworkMissingError(LibraryMissingError):
    """An agent framework is not installed here: one line naming the package and the pins."""

    def __init__(self, adapter: str, module: str, distribution: str) -> None:
        super().__init__(adapter, module, distribution)
        self.args = (
            f"agent adapter {adapter!r} needs the {distribution} package (missing module "
            f"{module}); its pins are the specs/matrix.toml group whose agents list names it",
        )


def missing_framework(adapter: str) -> FrameworkMissingError | None:
    """The one line for a built-in row whose framework is not installed here, else None
    (a row that is not a built-in framework, or one that is installed)."""
    if adapter not in REQUIRES:
        return None
    distribution, module = REQUIRES[adapter]
    try:
        found = importlib.util.find_spec(module) is not None
    except ImportError:  # a dotted name whose parent package is missing
        found = False
    except Exception:  # a parent package that is there but raises at import: the run says how
        found = True
    return None if found else FrameworkMissingError(adapter, module, distribution)


# `agents --jobs N` runs an adapter in N threads, and the first runs import the SDKs at once:
# two threads importing modules that import each other (openai and anthropic both import
# httpx2) can hand one of them a partially initialized module ("partially initialized
# module 'httpx2' has no attribute 'Timeout'"), a run that fails before its first request.
_IMPORTING: Final = threading.Lock()


def load(adapter: str, distribution: str, *modules: str) -> list[ModuleType]:
    """The framework's modules, or one line naming the package to install (an ImportError).

    Imported one thread at a time (see ``_IMPORTING``); once imported, a lookup."""
    loaded = []
    for module in modules:
        try:
            with _IMPORTING:
                loaded.append(importlib.import_module(module))
        except ImportError:
            raise FrameworkMissingError(adapter, module, distribution) from None
    return loaded


def preload(*modules: str) -> None:
    """Import what the runs will import, here, before the runs' threads start; a module
    not installed is left for the run that needs it to name.

    ``load``'s lock covers the imports made through it, not those a framework makes by
    itself on first use. In two whole-matrix runs a Strands run (four at once) failed
    before its first request with ``partially initialized module 'httpx2' has no attribute
    'Timeout'``: one thread's first import of google-genai, which imports httpx2, met
    another's. Imported up front, on the thread that builds the adapter, nothing is
    imported for the first time while runs go on."""
    for module in modules:
        with _IMPORTING, contextlib.suppress(ImportError):
            importlib.import_module(module)


def version_of(*distributions: str) -> str:
    """``dist==version`` of each installed distribution (the framework and its model client)."""
    found = []
    for dist in distributions:
        try:
            found.append(f"{dist}=={importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{dist} (not installed)")
    return ", ".join(found)


def openai_url(task: AgentTask) -> str:
    """OpenAI clients take the API root, ``/v1`` included."""
    return task.base_url.rstrip("/") + "/v1"


def root_url(task: AgentTask) -> str:
    """Anthropic and google-genai clients append their own ``/v1/...`` / ``/v1beta/...``."""
    return task.base_url.rstrip("/")


def unsupported(adapter: str, task: AgentTask, protocols: frozenset[str]) -> ValueError:
    return ValueError(
        f"agent adapter {adapter!r} does not speak {task.protocol!r} (it speaks {', '.join(sorted(protocols))})"
    )


def raised(exc: BaseException, **raw: Any) -> AgentOutcome:
    """The framework's raise as the row records it: class name and message, with the chain
    of exceptions that caused it as a traceback shows them (a framework's own error often
    wraps the client's, which says what was served: A12)."""
    causes: list[str] = []
    seen = exc
    while len(causes) < 4:
        cause = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
        if cause is None:
            break
        causes.append(f"{type(cause).__name__}: {cause}")
        seen = cause
    chain = f" (caused by {'; caused by '.join(causes)})" if causes else ""
    return AgentOutcome(error_type=type(exc).__name__, error_message=f"{exc}{chain}", raw=raw)


def finished(output: Any, **raw: Any) -> AgentOutcome:
    """The framework's final answer; a non-text answer kept as its ``str``."""
    return AgentOutcome(output=output if isinstance(output, str) else str(output), raw=raw)


def run_guarded(
    build: Callable[[], Awaitable[T]], task: AgentTask, answer: Callable[[T], AgentOutcome]
) -> AgentOutcome:
    """Run the framework's coroutine on a fresh event loop, bounded by the task's timeout.

    Only the framework's run is inside the ``try``: ``answer`` (the adapter's reading of
    the result) runs after, so a bug there escapes as a crash instead of a row.
    """

    async def bounded() -> T:
        bound = asyncio.timeout(task.limits.timeout_s)
        try:
            async with bound:
                return await build()
        except TimeoutError:
            if bound.expired():  # ours, not a timeout the framework raised itself
                raise AgentRunTimedOut(
                    f"no outcome within {task.limits.timeout_s:g} s (the run's bound)"
                ) from None
            raise

    try:
        result = asyncio.run(bounded())
    except AgentRunTimedOut:
        raise  # the runner labels it timeout
    except Exception as exc:  # the framework's raise is the run's outcome
        return raised(exc)
    return answer(result)


def properties(tool: AgentTool) -> tuple[dict[str, Any], list[str]]:
    """The tool schema's properties and required names, for frameworks that want them apart."""
    props = tool.parameters.get("properties") or {}
    required = tool.parameters.get("required") or []
    return dict(props), [str(r) for r in required]


_UNSET: Final = object()
_EXTRA: Final = "_harness_extra_arguments"


def user_function(tool: AgentTool) -> Callable[..., str]:
    """The tool as a user writes it: one named parameter per property of its schema.

    Frameworks hand a tool what they got the way the user's function takes it, and some
    bind by position: smolagents calls ``tool("Paris")`` when the model's arguments are a
    raw string, which a user's ``forward(self, city)`` takes as ``city``. A wrapper taking
    only ``**arguments`` would raise there and hide what the framework does, so the
    parameters are real (schema order), each optional, so that a missing argument still
    reaches the ledger as a user's function with defaults would see it; keyword arguments
    outside the schema reach it too.
    """
    props, _ = properties(tool)
    names = [n for n in props if n.isidentifier() and n != _EXTRA]
    parameters = [
        inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=_UNSET) for n in names
    ]
    parameters.append(inspect.Parameter(_EXTRA, inspect.Parameter.VAR_KEYWORD))
    signature = inspect.Signature(parameters)

    def call(*args: Any, **kwargs: Any) -> str:
        bound = signature.bind(*args, **kwargs)
        arguments = {k: v for k, v in bound.arguments.items() if k != _EXTRA and v is not _UNSET}
        arguments.update(bound.arguments.get(_EXTRA, {}))
        return tool.call(arguments)

    call.__signature__ = signature  # type: ignore[attr-defined]
    call.__name__ = tool.name if tool.name.isidentifier() else "tool"
    call.__doc__ = tool.description
    return call


def schema(tool: AgentTool) -> dict[str, Any]:
    """The tool's JSON schema as a plain dict with an object type, which every framework needs."""
    out = dict(tool.parameters)
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    return out


def arguments_model(pydantic: Any, tool: AgentTool) -> Any:
    """A pydantic model of the tool's arguments, for frameworks that take one, that keeps
    any argument and reports the task's schema as is (not one pydantic derives)."""
    declared = schema(tool)

    class Arguments(pydantic.BaseModel):  # type: ignore[misc]
        model_config = pydantic.ConfigDict(extra="allow")

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return declared

    return Arguments


class Options:
    """The settings a row's configuration applies (``agno[retries=1]``), for a framework
    adapter to read where it builds the framework's objects.

    ``KNOWN`` names each option the adapter can apply and what it sets; the row's
    configurations in ``specs/agent_conventions.yaml`` may use only these, and an option
    the adapter does not know is refused when it is built, not silently ignored.
    """

    KNOWN: ClassVar[Mapping[str, str]] = {}

    def __init__(self, options: Mapping[str, object] | None = None) -> None:
        given = dict(options or {})
        unknown = sorted(set(given) - set(self.KNOWN))
        if unknown:
            raise ValueError(
                f"no option {unknown[0]!r} (it has: {', '.join(sorted(self.KNOWN)) or 'none'})"
            )
        self.options = given

    def option(self, key: str, default: T) -> T:
        """The configured value of ``key``, or the framework's default when not configured."""
        value = self.options.get(key, default)
        if not isinstance(value, type(default)):
            raise ValueError(f"option {key!r} must be a {type(default).__name__}, got {value!r}")
        return value
