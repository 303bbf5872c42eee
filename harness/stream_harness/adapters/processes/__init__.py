"""The plumbing of runs we do not control: adapters in another process (stdio, in any
language; the JavaScript ones by name), the deadline of one in-process run, and stopping
the processes we started when this one ends.

Kept apart from the adapters that merely call a library: these own threads, pipes and
child processes, and their failures (a hang, a crash, a process left behind) are what
the runner must survive.
"""
