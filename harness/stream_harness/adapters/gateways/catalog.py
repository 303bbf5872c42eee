"""The gateways under test: how each is found, configured, started offline and called.

What is here comes from running them on this machine against a loopback upstream
(shared/research/proxy-conformance.md): the environment that keeps LiteLLM offline and
without a database, the master key it insists on, the header routing of Portkey, which
client endpoint each serves for which upstream protocol, and that the gateways' own
retries are off (``num_retries: 0`` for LiteLLM; Portkey retries only with a config
header, which is never sent).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from stream_harness.adapters.gateways.process import GatewayProcess
from stream_harness.adapters.protocol import AdapterLoadError
from stream_harness.contract.facts import bundled_js

ANTHROPIC: Final = "anthropic-messages"
CHAT: Final = "openai-completions"
RESPONSES: Final = "openai-responses"
GOOGLE: Final = "google-generative-ai"

# The client-facing endpoint of each protocol a gateway serves.
CLIENT_PATHS: Final[dict[str, str]] = {
    CHAT: "/v1/chat/completions",
    ANTHROPIC: "/v1/messages",
    RESPONSES: "/v1/responses",
}
PROMPT: Final = "Say hello."


def client_request(client: str, model: str, tools: Sequence[str]) -> dict[str, object]:
    """A minimal streaming request of the client protocol, declaring the tools the upstream
    response calls (a gateway translating the response needs nothing else of the request;
    every gateway rewrites the request anyway, so the recorded one would not reach the
    upstream as recorded either)."""
    if client == CHAT:
        body: dict[str, object] = {
            "model": model,
            "messages": [{"role": "user", "content": PROMPT}],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = [
                {"type": "function", "function": {"name": t, "parameters": {"type": "object"}}}
                for t in tools
            ]
        return body
    if client == ANTHROPIC:
        body = {
            "model": model,
            "max_tokens": 1024,
            "messages": [{"role": "user", "content": PROMPT}],
            "stream": True,
        }
        if tools:
            body["tools"] = [{"name": t, "input_schema": {"type": "object"}} for t in tools]
        return body
    if client == RESPONSES:
        body = {"model": model, "input": PROMPT, "stream": True}
        if tools:
            body["tools"] = [
                {"type": "function", "name": t, "parameters": {"type": "object"}} for t in tools
            ]
        return body
    raise ValueError(f"no client request for protocol {client!r}")


@dataclass(frozen=True)
class Gateway:
    """One kind of gateway: its routes, and how to start and call one."""

    name: str
    # upstream protocol -> the client protocols it serves for it (what was seen working)
    routes: Mapping[str, tuple[str, ...]]
    find: Callable[[], str | None]  # why it cannot run here, or None
    version: Callable[[], str]
    process: Callable[[str, Path], GatewayProcess]  # (upstream url, log folder)
    model: Callable[[str], str]  # upstream protocol -> what the client sends as model
    headers: Callable[
        [str, str, GatewayProcess], dict[str, str]
    ]  # (upstream protocol, upstream url, proc)


# ---------------------------------------------------------------------------------------
# LiteLLM proxy
# ---------------------------------------------------------------------------------------

LITELLM_ENV: Final = "STREAM_HARNESS_LITELLM"
_LITELLM_MODELS: Final[dict[str, tuple[str, str]]] = {
    # alias -> (litellm model, path under the upstream's url for api_base)
    ANTHROPIC: ("anthropic/claude-haiku-4-5-20251001", ""),
    CHAT: ("openai/gpt-4o-mini", "/v1"),
    RESPONSES: ("openai/gpt-4o-mini", "/v1"),
    GOOGLE: ("gemini/gemini-2.5-flash", ""),
}
_MASTER_KEYS: dict[int, str] = {}


def litellm_binary() -> Path | None:
    """``$STREAM_HARNESS_LITELLM``, else ``litellm`` beside this Python (a matrix env), else PATH."""
    named = os.environ.get(LITELLM_ENV)
    if named:
        return Path(named)
    beside = Path(sys.executable).parent / "litellm"
    if beside.is_file():
        return beside
    found = shutil.which("litellm")
    return Path(found) if found else None


def _litellm_missing() -> str | None:
    binary = litellm_binary()
    if binary is None or not binary.is_file():
        return "the LiteLLM proxy is not installed (pip install 'litellm[proxy]', or set STREAM_HARNESS_LITELLM)"
    return None


def _litellm_version() -> str:
    binary = litellm_binary()
    if binary is None:
        return "unknown"
    for dist in sorted(
        binary.resolve().parent.parent.glob("lib/python*/site-packages/litellm-*.dist-info")
    ):
        return dist.name.removeprefix("litellm-").removesuffix(".dist-info")
    return "unknown"


def litellm_config(upstream: str) -> str:
    """The proxy's config: one alias per upstream protocol, retries off (JSON is YAML)."""
    models = [
        {
            "model_name": f"up-{proto}",
            "litellm_params": {
                "model": model,
                "api_base": upstream + suffix,
                "api_key": "sk-stream-harness",
            },
        }
        for proto, (model, suffix) in _LITELLM_MODELS.items()
    ]
    return json.dumps(
        {
            "model_list": models,
            "router_settings": {"num_retries": 0},
            "litellm_settings": {"num_retries": 0, "request_timeout": 60},
        },
        indent=1,
    )


def litellm_environment(master_key: str) -> dict[str, str]:
    """Offline, no telemetry, no database, no proxy variables; the master key it requires."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS="True",
        LITELLM_TELEMETRY_DISABLED="true",
        DISABLE_ADMIN_UI="True",
        LITELLM_DONT_SHOW_FEEDBACK_BOX="true",
        LITELLM_MASTER_KEY=master_key,
        LITELLM_LOG="ERROR",
        NO_PROXY="*",
        PYTHONUNBUFFERED="1",
    )
    return env


def _litellm_process(upstream: str, folder: Path) -> GatewayProcess:
    binary = litellm_binary()
    if binary is None:
        raise AdapterLoadError(str(_litellm_missing()))
    # One file per process: forked runner workers share the log folder, and each one's
    # gateway must read its own upstream's address.
    config = folder / f"litellm-config-{secrets.token_hex(4)}.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    config.write_text(litellm_config(upstream), encoding="utf-8")
    key = "sk-" + secrets.token_hex(24)
    proc = GatewayProcess(
        "litellm-proxy",
        lambda port: [
            str(binary),
            "--config",
            str(config),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--num_workers",
            "1",
        ],
        ready_path="/health/liveliness",
        env=litellm_environment(key),
        cwd=folder,
        log_dir=folder,
        start_timeout=120.0,
    )
    _MASTER_KEYS[id(proc)] = key
    return proc


def _litellm_headers(upstream_protocol: str, upstream: str, proc: GatewayProcess) -> dict[str, str]:
    return {"authorization": f"Bearer {_MASTER_KEYS.get(id(proc), '')}"}


LITELLM: Final = Gateway(
    name="litellm-proxy",
    routes={
        ANTHROPIC: (CHAT, ANTHROPIC, RESPONSES),
        CHAT: (CHAT,),
        RESPONSES: (ANTHROPIC, RESPONSES),
        GOOGLE: (CHAT, ANTHROPIC, RESPONSES),
    },
    find=_litellm_missing,
    version=_litellm_version,
    process=_litellm_process,
    model=lambda proto: f"up-{proto}",
    headers=_litellm_headers,
)


# ---------------------------------------------------------------------------------------
# Portkey gateway (Node)
# ---------------------------------------------------------------------------------------

PORTKEY_ENV: Final = "STREAM_HARNESS_PORTKEY"
PORTKEY_FOLDER: Final = "proxies/portkey"  # under adapters-js/: package.json and lock file
PORTKEY_SERVER: Final = "node_modules/@portkey-ai/gateway/build/start-server.js"
_PORTKEY_PROVIDERS: Final[dict[str, tuple[str, str, str]]] = {
    # upstream protocol -> (x-portkey-provider, model, custom-host suffix)
    CHAT: ("openai", "gpt-4o-mini", "/v1"),
    RESPONSES: ("openai", "gpt-4o-mini", "/v1"),
    ANTHROPIC: ("anthropic", "claude-haiku-4-5-20251001", "/v1"),
    GOOGLE: ("google", "gemini-2.5-flash", ""),  # Portkey appends /v1beta itself
}


def portkey_root() -> Path | None:
    """``$STREAM_HARNESS_PORTKEY``, else the matrix environment's npm folder, holding the install."""
    for name in (PORTKEY_ENV, "STREAM_HARNESS_JS"):
        value = os.environ.get(name)
        if value and (Path(value) / PORTKEY_SERVER).is_file():
            return Path(value)

    root = bundled_js() / PORTKEY_FOLDER
    return root if (root / PORTKEY_SERVER).is_file() else None


def _node() -> str | None:
    return os.environ.get("STREAM_HARNESS_NODE") or shutil.which("node")


def _portkey_missing() -> str | None:
    if _node() is None:
        return "node is not on PATH (Node >= 20; or set STREAM_HARNESS_NODE)"
    if portkey_root() is None:
        return f"the Portkey gateway is not installed (npm ci in adapters-js/proxies/portkey, or set {PORTKEY_ENV})"
    return None


def _portkey_version() -> str:
    root = portkey_root()
    if root is None:
        return "unknown"
    data = json.loads(
        (root / "node_modules/@portkey-ai/gateway/package.json").read_text(encoding="utf-8")
    )
    return str(data.get("version", "unknown"))


def _portkey_process(upstream: str, folder: Path) -> GatewayProcess:
    root, node = portkey_root(), _node()
    if root is None or node is None:
        raise AdapterLoadError(str(_portkey_missing()))
    keep = ("PATH", "HOME", "LANG", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["NO_PROXY"] = "*"
    return GatewayProcess(
        "portkey",
        lambda port: [node, str(root / PORTKEY_SERVER), f"--port={port}", "--headless"],
        ready_path="/",
        env=env,
        cwd=root,
        log_dir=folder,
        start_timeout=60.0,
        is_ready=lambda status, body: status == 200 and b"says hey" in body,
    )


def _portkey_headers(upstream_protocol: str, upstream: str, proc: GatewayProcess) -> dict[str, str]:
    provider, _model, suffix = _PORTKEY_PROVIDERS[upstream_protocol]
    key = "sk-ant-stream-harness" if provider == "anthropic" else "sk-stream-harness"
    headers = {
        "x-portkey-provider": provider,
        "x-portkey-custom-host": upstream + suffix,
        "authorization": f"Bearer {key}",
    }
    if provider == "anthropic":
        headers["x-api-key"] = key
    return headers


PORTKEY: Final = Gateway(
    name="portkey",
    routes={
        CHAT: (CHAT,),
        ANTHROPIC: (CHAT, ANTHROPIC),
        RESPONSES: (RESPONSES,),
        GOOGLE: (CHAT,),
    },
    find=_portkey_missing,
    version=_portkey_version,
    process=_portkey_process,
    model=lambda proto: _PORTKEY_PROVIDERS[proto][1],
    headers=_portkey_headers,
)

GATEWAYS: Final[dict[str, Gateway]] = {g.name: g for g in (LITELLM, PORTKEY)}


def row_name(gateway: str, upstream: str, client: str) -> str:
    """The adapter (row) name: the gateway and the upstream -> client protocol pair."""
    return f"{gateway}[{upstream}->{client}]"


def all_rows() -> list[str]:
    return [
        row_name(g.name, up, cl)
        for g in GATEWAYS.values()
        for up, cls in g.routes.items()
        for cl in cls
    ]
