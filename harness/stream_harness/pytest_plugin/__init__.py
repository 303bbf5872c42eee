"""pytest plugin (entry point ``pytest11``): run the conformance suite as test items.

``pytest --harness`` adds one test item per (adapter, case, check), so a CI failure reads
``stream-harness::openai-sdk::split-invariance[openai-completions/parallel_tool_calls.yaml#0]``
with the reproduce command in the report; such ids (or a prefix) select items on the
command line, and ``-k``, ``--lf`` and ``--ff`` work on them as on any test. Options pick the adapter(s), cassette folders and
the number of random splits. Fixtures and a marker let users drive their own tests over
cassettes:

.. code-block:: python

    @pytest.mark.harness_cassettes("cassettes/openai-completions")
    def test_my_client(harness_cassette, harness_chunks, harness_transport):
        client = MyClient(transport=harness_transport)   # serves the body in harness_chunks
        ...

Imports of the engine are deferred: the plugin loads in every pytest run of every
project that installs stream-harness, so it must cost nothing unless used.
"""

# One entry point (``pytest11``: ``stream_harness``) loads this module; pytest then loads
# each module named here as a plugin of its own, so ``-p no:stream_harness`` still turns
# them all off. The order matters once: pluggy calls the later registered of two hooks
# first, and the stream items are collected before the agent items.
pytest_plugins = [
    "stream_harness.pytest_plugin.options",
    "stream_harness.pytest_plugin.agent_items",
    "stream_harness.pytest_plugin.stream_items",
    "stream_harness.pytest_plugin.markers",
]
