"""Gateways wire to wire: a real LLM gateway between a replayed upstream and the reference.

``upstream`` serves a case's recorded body on 127.0.0.1 to whatever endpoint of its
protocol the gateway calls; ``process`` starts and always stops the gateway process;
``gateways`` knows how to run LiteLLM's proxy and Portkey offline; ``adapter`` makes one
gateway and one upstream -> client protocol pair an ordinary Adapter (a report row);
``compare`` compares final messages across protocols for the checks. Nothing here imports
the conformance runner.
"""
