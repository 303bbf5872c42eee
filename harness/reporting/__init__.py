"""Turning results into what people read: terminal tables and the conformance report."""
