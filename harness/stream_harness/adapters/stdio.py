"""The path specs/adapter-protocol.md gives users for a process adapter of their own: an
entry point whose factory returns ``stream_harness.adapters.stdio.StdioAdapter([...])``.

The module is :mod:`stream_harness.adapters.processes.stdio`; this name stays for users'
entry points.
"""

from stream_harness.adapters.processes.stdio import StdioAdapter

__all__ = ["StdioAdapter"]
