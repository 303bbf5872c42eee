"""Package marker: the build ships this folder as ``harness._bundled.adapters_js`` (setup.py); code reads it through ``harness.specs.bundled_js``."""
