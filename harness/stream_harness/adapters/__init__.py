"""Built-in adapters: official SDKs run on recorded bodies, as conformance subjects.

Each adapter drives the library's real streaming code: a client whose HTTP transport is
:func:`stream_harness.recordings.transport.replay_transport`, serving the body in exactly the chunks the check
chose, with no vcrpy context active (vcrpy would merge the chunks, ecosystem.md section
0). The SDKs expose only their final object, so these adapters are ``message`` level;
the per-adapter conventions (how that object becomes an ``AssistantMessage``) are in
``specs/adapters.md``.

The SDKs are an optional extra. They are imported when an adapter is *constructed*, not
when this package is imported, so that ``stream_harness.conformance.load_adapter`` can say what
to install instead of failing the whole command (:class:`~stream_harness.adapters.sdk_support.SDKMissingError`).

What the adapters share is in :mod:`stream_harness.adapters.in_process` (their base) and
:mod:`stream_harness.adapters.sdk_support` (the helpers of their mappings); this package
module holds nothing, so importing one adapter loads only what that adapter needs.
"""
