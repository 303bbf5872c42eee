"""Third-party libraries as conformance subjects: LiteLLM, pydantic-ai, LangChain, and the
libraries that hand out OpenAI-shaped chunks (any-llm, aisuite, llm).

Each translates many providers into its own vocabulary, so each has its conventions
(specs/adapter_conventions.yaml). Their base, :mod:`stream_harness.adapters.library`, stays
beside the protocol because the SDK adapters use it too. This package module holds
nothing, so importing one adapter loads only what that adapter needs.
"""
