"""Package layout only; everything else is in pyproject.toml.

The design card keeps ``specs/`` and ``cassettes/`` at the top of the repository, while the
code reads them as package data (``harness/specs.py``). Mapping the two folders to packages
under ``harness._bundled`` carries them into the wheel and, for an editable install, points
the same package names at the checkout: one way to find them everywhere.
"""

from setuptools import find_packages, setup

BUNDLED = {
    "harness._bundled.specs": "specs",
    "harness._bundled.cassettes": "cassettes",
    "harness._bundled.adapters_js": "adapters-js",
}

setup(
    packages=[*find_packages(include=["harness", "harness.*"]), *BUNDLED],
    package_dir=BUNDLED,
    package_data={"harness": ["py.typed"], **{name: ["**/*"] for name in BUNDLED}},
    exclude_package_data={
        "harness._bundled.cassettes": ["_generate/*"],
        "harness._bundled.adapters_js": [
            "node_modules/*", "node_modules/**/*", "proxies/*/node_modules/*", "proxies/*/node_modules/**/*",
        ],
    },
)
