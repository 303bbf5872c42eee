"""The cassette workflow: record, import, lint and bless.

Each command lives in its own module with an ``add_<cmd>_parser(subparsers)`` and a
``<cmd>_command(args) -> int``; ``stream_harness.cli.main`` wires them in. Secrets are found by one
scanner (:mod:`stream_harness.workflow.secrets`, reading ``specs/secrets.yaml``) that both the
scrubber and the linter use, so what lint reports is exactly what record and import remove.
"""
