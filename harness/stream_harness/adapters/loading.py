"""Finding an adapter by name: built-in, third-party, entry point, ``module:object``,
``cmd:`` (a process speaking specs/adapter-protocol.md) or a gateway row.

Third-party adapters register through the entry-point group ``stream_harness.adapters``
or are named on the command line as ``module:object``; the object is an adapter instance,
an adapter class, or a zero-argument factory. Library adapters are named by module path,
not imported here: their libraries are optional, and each is imported when named.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import traceback
import warnings
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from stream_harness.adapters.gateways.adapter import proxy_adapter
from stream_harness.adapters.gateways.catalog import GATEWAYS
from stream_harness.adapters.processes.stdio import command_adapter
from stream_harness.adapters.protocol import Adapter, AdapterLoadError
from stream_harness.adapters.registry import THIRD_PARTY
from stream_harness.contract.names import known_names

ENTRY_POINT_GROUP = "stream_harness.adapters"

# Where 0.1's adapter modules (import package ``harness``) went. Consulted only when the
# name does not import as given: a user's own ``harness`` package always wins.
_RENAMED_MODULES = {
    "harness.adapter": "stream_harness.adapters.protocol",
    "harness.stdio_adapter": "stream_harness.adapters.processes.stdio",
    "harness.proxy.adapter": "stream_harness.adapters.gateways.adapter",
}

# 0.1's ``harness.adapters.<module>`` sits in a wing of stream_harness.adapters now.
_WING_OF = {
    **dict.fromkeys(
        (
            "anthropic_sdk",
            "bedrock_sdk",
            "cohere_sdk",
            "google_genai",
            "mistral_sdk",
            "openai_create",
            "openai_sdk",
            "openai_websocket",
        ),
        "sdks",
    ),
    **dict.fromkeys(("chunked", "langchain", "litellm", "pydantic_ai"), "libraries"),
    **dict.fromkeys(("deadline", "exit_hooks", "js", "stdio"), "processes"),
}


def renamed_module(old: str) -> str | None:
    """The 0.2 name of a 0.1 module that an adapter spec or entry point may still name."""
    if old in _RENAMED_MODULES:
        return _RENAMED_MODULES[old]
    if old.startswith("harness.adapters."):
        rest = old.removeprefix("harness.adapters.")
        wing = _WING_OF.get(rest.partition(".")[0])
        return (
            f"stream_harness.adapters.{wing}.{rest}" if wing else f"stream_harness.adapters.{rest}"
        )
    return None


BUILTIN: dict[str, str] = {
    "reference": "stream_harness.adapters.protocol:ReferenceAdapter",
    "anthropic-sdk": "stream_harness.adapters.sdks.anthropic_sdk:AnthropicSDKAdapter",
    "anthropic-sdk-beta": "stream_harness.adapters.sdks.anthropic_sdk:AnthropicBetaSDKAdapter",
    "anthropic-sdk-vertex": "stream_harness.adapters.sdks.anthropic_sdk:AnthropicVertexSDKAdapter",
    "openai-sdk": "stream_harness.adapters.sdks.openai_sdk:OpenAISDKAdapter",
    # Bedrock InvokeModelWithResponseStream (boto3 and botocore are in the sdk extra).
    "boto3-bedrock-invoke": "stream_harness.adapters.sdks.bedrock_sdk:Boto3BedrockInvokeAdapter",
    "anthropic-bedrock-sdk": "stream_harness.adapters.sdks.bedrock_sdk:AnthropicBedrockSDKAdapter",
}


def _instantiate(obj: object, spec: str) -> Adapter:
    try:
        candidate = (
            obj()
            if isinstance(obj, type) or (callable(obj) and not isinstance(obj, Adapter))
            else obj
        )
    except AdapterLoadError:
        raise
    except ImportError as exc:  # an adapter whose library is not installed
        raise AdapterLoadError(f"adapter {spec!r} cannot start: {exc}") from None
    except Exception as exc:  # the user's constructor: one line, never a traceback
        raise AdapterLoadError(
            f"adapter {spec!r}: constructing it raised {_one_line(exc)}"
        ) from None
    if not isinstance(candidate, Adapter):
        raise AdapterLoadError(
            f"adapter {spec!r} is not an Adapter (needs name, level, protocols, version(), run())"
        )
    return candidate


def _one_line(exc: BaseException) -> str:
    """``Type: message (file:line)``: enough to find a user's bug without a traceback."""
    where = ""
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f" ({exc.filename}:{exc.lineno})"
    else:
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            where = f" ({frames[-1].filename}:{frames[-1].lineno})"
    text = str(exc.msg if isinstance(exc, SyntaxError) else exc).splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}{where}"


@contextlib.contextmanager
def _project_on_path(project: Path | None) -> Iterator[None]:
    """The project folder first on sys.path for the duration of one import, as ``python -m``
    would put it there, without leaving it for the rest of the process."""
    entry = str(project.resolve()) if project is not None else None
    if entry is None or entry in sys.path:
        yield
        return
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def _import(module_name: str, spec: str, project: Path | None) -> ModuleType:
    try:
        with _project_on_path(project):
            return importlib.import_module(module_name)
    except ImportError as exc:
        new_name = renamed_module(module_name)
        if new_name is None:
            raise AdapterLoadError(
                f"adapter {spec!r}: cannot import {module_name}: {exc}"
            ) from None
        warnings.warn(
            f"stream-harness: {module_name!r} is {new_name!r} since 0.2 (the import package is "
            f"stream_harness); the old name is accepted until 0.3",
            FutureWarning,  # shown by default: the user running the command must see it
            stacklevel=3,
        )
        return importlib.import_module(new_name)
    except Exception as exc:  # a SyntaxError or an exception at import in the user's module
        raise AdapterLoadError(
            f"adapter {spec!r}: importing {module_name} raised {_one_line(exc)}"
        ) from None


def load_adapter(spec: str, *, project: Path | None = None) -> Adapter:
    """An adapter by built-in name, entry-point name, or ``module:object``.

    A ``module:object`` is imported from ``project`` (the folder of the pyproject.toml that
    holds the configuration, else the working directory) before anything else on sys.path,
    so the same spec works from the project root, a subfolder or a parent folder.
    """
    if "->" in spec and spec.endswith("]"):  # a gateway row: <gateway>[<upstream>-><client>]
        return proxy_adapter(spec)
    if spec.startswith("cmd:"):  # any executable speaking specs/adapter-protocol.md
        return command_adapter(spec)
    target = BUILTIN.get(spec) or THIRD_PARTY.get(spec)
    if target is None:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == spec:
                try:
                    return _instantiate(ep.load(), spec)
                except ImportError as exc:
                    if renamed_module(ep.module) is None:
                        raise AdapterLoadError(
                            f"adapter {spec!r}: cannot import {ep.value}: {exc}"
                        ) from None
                    target = ep.value  # an entry point naming one of our 0.1 modules
                except AdapterLoadError:
                    raise
                except Exception as exc:
                    raise AdapterLoadError(
                        f"adapter {spec!r}: loading {ep.value} raised {_one_line(exc)}"
                    ) from None
        target = target or spec
    module_name, _, attr = target.partition(":")
    if not attr:
        raise AdapterLoadError(
            f"unknown adapter {spec!r} ({known_names(spec, known_adapter_names())}; or give "
            f"module:object, cmd:COMMAND or a gateway row GATEWAY[UPSTREAM->CLIENT] of "
            f"{', '.join(sorted(GATEWAYS))})"
        )
    module = _import(module_name, spec, project if project is not None else Path.cwd())
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise AdapterLoadError(f"adapter {spec!r}: {module_name} has no {attr!r}") from None
    return _instantiate(obj, spec)


# What `stream-harness report` runs when no adapter is named: the reference and every
# official SDK adapter (the `sdk` extra); the third-party libraries run when named, or
# per environment by `stream-harness matrix`.
DEFAULT_ADAPTERS = (
    "reference",
    "anthropic-sdk",
    "anthropic-sdk-beta",
    "openai-sdk",
    "openai-sdk-create",
    "openai-sdk-websocket",
    "google-genai",
    "anthropic-sdk-vertex",
    "google-genai-vertex",
)


def available_adapters() -> list[str]:
    """Default adapters that load here (their library is installed), then plugins."""
    names = []
    for name in [*DEFAULT_ADAPTERS, *(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))]:
        try:
            load_adapter(name)
        except AdapterLoadError:
            continue
        names.append(name)
    return names


def known_adapter_names() -> list[str]:
    """Every name ``--adapter`` takes as it is: built-in, third-party (installed here or
    not: each names its package when it cannot start) and entry points, sorted."""
    return sorted(
        {*BUILTIN, *THIRD_PARTY, *(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))}
    )


def is_known_name(name: str) -> bool:
    """Whether ``name`` is still an adapter stream-harness knows by name, whether or not its
    library is installed here: built-in, third-party (each run by ``matrix`` in its own
    environment), an entry point, or a gateway row of a known gateway.

    What ``report`` asks of the rows of an earlier run that this run did not re-run: a
    project's adapter renamed or removed leaves rows no command can refresh.
    """
    if name in BUILTIN or name in THIRD_PARTY:
        return True
    gateway, bracket, pair = name.partition("[")
    if bracket and name.endswith("]") and "->" in pair:
        return gateway in GATEWAYS
    return any(ep.name == name for ep in entry_points(group=ENTRY_POINT_GROUP))
