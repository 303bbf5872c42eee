"""The agent rows in the reports: the console lines of ``stream-harness agents`` and the
triage ``merge`` recomputes from the expectation files. The report format itself is the
stream half's (:mod:`stream_harness.reporting`), which holds agent rows too.
"""
