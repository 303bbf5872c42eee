"""Namespace for the data the build maps in: specs/ and cassettes/ (see stream_harness.contract.facts)."""
