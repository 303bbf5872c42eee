"""``stream-harness agents``: the flags and the run of the agent half's one command.

:mod:`.command` is the command (agents x scenarios x protocols, judged, reported),
:mod:`.app_mode` its ``--app`` rows, :mod:`.explore` its ``--explore`` run, :mod:`.options`
where a user's code is found. ``stream_harness.cli.main`` adds the parser.
"""
