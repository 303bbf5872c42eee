"""Package marker: the build ships this folder as ``stream_harness._bundled.adapters_js`` (setup.py); code reads it through ``stream_harness.contract.facts.bundled_js``."""
