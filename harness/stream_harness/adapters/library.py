"""What every third-party library adapter shares: loading, running, and turning a raise into a result.

A library adapter is two halves. :meth:`LibraryAdapter.drive` runs the library's real
streaming code on the replayed body and keeps what the library handed its user (its final
object, the chunks it yielded, or the exception it raised together with what it had so
far): only this half is inside the ``try``, so that a bug in the adapter's own mapping
code is recorded by the runner as a crash, not blamed on the library.
:meth:`LibraryAdapter.collect` then reads those objects into a
:class:`~stream_harness.adapters.conventions.Collected`, and the adapter's conventions
(``specs/adapter_conventions.yaml``) turn that into the contract's message.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.metadata
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any, ClassVar, TypeVar, cast

from stream_harness.adapters.conventions import Collected, finish, reference_message
from stream_harness.adapters.in_process import InProcessAdapter, Replay
from stream_harness.adapters.protocol import AdapterLoadError, AdapterResult
from stream_harness.adapters.sdk_support import raised_result, serve
from stream_harness.contract.events import AssistantMessage

T = TypeVar("T")

# Every request the library sends is answered with the recorded body; the request itself
# is never checked, but libraries validate their arguments, so they must be well formed.
PROMPT: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
BASE_URL = "http://harness.invalid"


class LibraryMissingError(AdapterLoadError, ImportError):
    """An adapter's library is not installed here.

    Both an ``AdapterLoadError`` (the CLI prints one line) and an ``ImportError``. The
    libraries' pins conflict, so no single environment holds them all: ``stream-harness
    matrix`` builds one per group (``specs/matrix.toml``).
    """

    def __init__(self, adapter: str, module: str, distribution: str) -> None:
        super().__init__(
            f"adapter {adapter!r} needs the {distribution} package (missing module {module}); "
            "`stream-harness matrix` builds an environment for it (specs/matrix.toml)"
        )
        self.adapter = adapter
        self.distribution = distribution


def import_all(adapter: str, distribution: str, modules: Sequence[str]) -> dict[str, ModuleType]:
    loaded: dict[str, ModuleType] = {}
    for name in modules:
        try:
            loaded[name] = importlib.import_module(name)
        except ImportError:
            raise LibraryMissingError(adapter, name, distribution) from None
    return loaded


@dataclass
class Driven:
    """What the library handed its user in one run."""

    value: Any = None  # the final object(s), library-specific
    raised: BaseException | None = None
    partial: Any = None  # what the library still offered when it raised
    raw: dict[str, Any] = field(default_factory=dict)
    # When the library raised: the raw stop value its raise stands for (a library that
    # signals a wire stop value by raising, specs/adapter_conventions.yaml), else None;
    # only read when ``override_stop`` (else the partial's own stop value is kept).
    raised_stop: str | None = None
    override_stop: bool = False
    # When the library raised and the usage of its partial is its own fill-in (no chunk
    # carried a count), not a count it reported: dropped.
    drop_usage: bool = False


class LibraryAdapter(InProcessAdapter[Driven]):
    """Base of the third-party adapters: one library, the protocols it speaks."""

    # The distribution whose version the report records, and the modules imported up front.
    distribution: ClassVar[str]
    modules: ClassVar[tuple[str, ...]] = ()

    # The modules a run of each protocol imports on first use, beyond ``modules`` (which
    # every protocol needs): imported by :meth:`prepare`, outside the run timeout.
    protocol_modules: ClassVar[Mapping[str, tuple[str, ...]]] = {}

    def __init__(self) -> None:
        self._modules = import_all(self.name, self.distribution, self.modules)

    def prepare(self, protocol: str) -> None:
        """Import ``protocol_modules[protocol]`` now, before a run is timed
        (:func:`~stream_harness.adapters.processes.deadline.prepare`): a library's loading
        is not its streaming, and LangChain's Vertex AI model alone imports 3,200 modules.
        A module that does not load is left for the run, which records why."""
        for name in self.protocol_modules.get(protocol, ()):
            with contextlib.suppress(ImportError):
                importlib.import_module(name)

    def module(self, name: str) -> ModuleType:
        return self._modules[name]

    def version(self) -> str:
        return importlib.metadata.version(self.distribution)

    def reference(self, protocol: str, replay: Replay) -> AssistantMessage | None:
        return reference_message(protocol, replay.chunks, replay.status, replay.headers)

    def result(
        self, protocol: str, driven: Driven, reference: AssistantMessage | None
    ) -> AdapterResult:
        if driven.raised is None:
            message = finish(self.name, protocol, self.collect(protocol, driven.value), reference)
            return AdapterResult(message=message, raw=driven.raw)
        base = None
        if driven.partial is not None:
            collected = self.collect(protocol, driven.partial)
            if driven.override_stop:
                collected = replace(collected, stop=driven.raised_stop)
            if driven.drop_usage:
                collected = replace(collected, usage=None)
            base = finish(self.name, protocol, collected, reference)
        elif driven.override_stop and driven.raised_stop is not None:
            base = finish(self.name, protocol, Collected(stop=driven.raised_stop), reference)
        return raised_result(driven.raised, base, driven.raw)

    def transport(self, httpx_module: ModuleType, replay: Replay) -> Any:
        """The adapter's one transport for ``httpx_module``, now serving this response.

        One per adapter, not per run, so that a client built on it can be kept across
        runs (:meth:`once`); every request it gets is answered with the response of the
        run in progress, in that run's chunks, exactly as a fresh transport would.
        """
        # Kept in the instance's dict, set up on first use: a subclass need not call
        # this class's __init__ for it.
        self.__dict__["_serving"] = serve(
            httpx_module, replay.chunks, status=replay.status, headers=replay.headers
        )
        transports: dict[int, Any] = self.__dict__.setdefault("_transports", {})
        found = transports.get(id(httpx_module))
        if found is None:
            found = transports[id(httpx_module)] = httpx_module.MockTransport(self._serve_current)
        return found

    def _serve_current(self, request: Any) -> Any:
        return self.__dict__["_serving"].handler(request)

    def once(self, key: Any, build: Callable[[], T]) -> T:
        """``build()`` the first time ``key`` is asked for, the same object after that.

        For clients whose construction is not what is under test and costs more than a
        run: a google-genai ``Client`` loads two SSL contexts from disk (about 50 ms of
        CPU) although the replay never opens a socket; users build a client once and
        stream many times. Only for objects built on :meth:`transport` (which serves
        each run's response) and holding no state from one request to the next.
        """
        kept: dict[Any, Any] = self.__dict__.setdefault("_kept", {})
        if key not in kept:
            kept[key] = build()
        return cast(T, kept[key])

    # -- what each adapter implements, with drive() --------------------------------------

    def collect(self, protocol: str, value: Any) -> Collected:
        raise NotImplementedError


class YieldingSDKAdapter(LibraryAdapter):
    """An official SDK that yields one parsed object per event and offers no accumulator.

    Its client is built once on the replay transport (:meth:`LibraryAdapter.once`: the
    client is not what is under test, users build one and stream many times, and building
    one loads SSL contexts, most of a run's time); every object the stream yields is kept
    (:func:`drain`), and :meth:`collect` joins them as the SDK's users join them.
    """

    # The HTTP library the SDK's client is given (one of ``modules``), and what ``raw``
    # calls the yielded objects.
    http: ClassVar[str]
    yields: ClassVar[str] = "events"

    def drive(self, protocol: str, replay: Replay) -> Driven:
        http = self.http_module()
        transport = self.transport(http, replay)
        client = self.once(protocol, lambda: self.build_client(http, transport))
        return drain(lambda: self.stream(client), self.yields)

    def http_module(self) -> ModuleType:
        return self.module(self.http)

    def build_client(self, http: Any, transport: Any) -> Any:
        raise NotImplementedError

    def stream(self, client: Any) -> Iterable[Any]:
        raise NotImplementedError


def drain(stream: Callable[[], Iterable[Any]], label: str) -> Driven:
    """Every object the library's stream yields, kept as a user without an accumulator
    keeps them to join them afterwards; when it raises, those it yielded before are what it
    had. ``raw`` keeps the last three (``label`` names them), or how many came before a raise.
    """
    received: list[Any] = []
    try:
        for item in stream():
            received.append(item)
    except Exception as exc:
        return Driven(raised=exc, partial=received or None, raw={label: len(received)})
    return Driven(value=received, raw={label: [dump(r) for r in received[-3:]]})


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """One fresh event loop per run: libraries cache clients per loop, and runs never overlap."""
    return asyncio.run(coro)


def dump(obj: Any) -> Any:
    """A library object as JSON-able data for ``AdapterResult.raw`` (best effort)."""
    for method in ("model_dump", "to_dict", "dict"):
        fn = getattr(obj, method, None)
        if callable(fn):
            try:
                return fn(mode="json") if method == "model_dump" else fn()
            except Exception:
                continue
    return repr(obj)[:2000]


def as_int(value: Any) -> int:
    """A counter as the contract takes it: an int, never a bool; anything else is 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
