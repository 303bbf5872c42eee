"""Package marker: the build ships this folder as ``harness._bundled.cassettes`` (setup.py); code reads it through ``harness.specs``."""
