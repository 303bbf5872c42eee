"""Package layout only; everything else is in pyproject.toml.

The design card keeps ``specs/`` and ``cassettes/`` at the top of the repository, while the
code reads them as package data (``harness/stream_harness/contract/facts.py``). Mapping the two folders to packages
under ``stream_harness._bundled`` carries them into the wheel and, for an editable install, points
the same package names at the checkout: one way to find them everywhere.
"""

from setuptools import find_packages, setup

BUNDLED = {
    "stream_harness._bundled.specs": "specs",
    "stream_harness._bundled.cassettes": "cassettes",
    "stream_harness._bundled.adapters_js": "adapters-js",
}

setup(
    packages=[*find_packages("harness", include=["stream_harness", "stream_harness.*"]), *BUNDLED],
    package_dir={"": "harness", **BUNDLED},
    package_data={"stream_harness": ["py.typed"], **{name: ["**/*"] for name in BUNDLED}},
    exclude_package_data={
        "stream_harness._bundled.cassettes": ["_generate/*"],
        "stream_harness._bundled.adapters_js": [
            "node_modules/*", "node_modules/**/*", "proxies/*/node_modules/*", "proxies/*/node_modules/**/*",
        ],
    },
)
