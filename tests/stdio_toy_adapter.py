#!/usr/bin/env python3
"""A toy stdio adapter written from specs/adapter-protocol.md alone (no stream-harness imports).

It is a tiny OpenAI Chat Completions stream client of its own: an incremental SSE parser
fed the chunks the harness asks for, joining text and tool-call deltas. The tests run the
conformance suite on it through the protocol, and use its fault switches to check that a
crashing, hanging, noisy or malformed implementation is a result, not a stopped run:

    --fault crash@N      exit(3) on the N-th run of this process
    --fault hang@N       never answer the N-th run
    --fault garbage@N    answer the N-th run with a `{` line that is not JSON
    --fault badseq@N     answer the N-th run with the wrong seq
    --noise              print stray console lines on stdout before each reply
    --name NAME          the implementation name of the handshake
    --pid-file PATH      append this process's pid to PATH when it is started
    --own-words          report stop values in a vocabulary of its own (end, max, tools)
    --declare            declare that vocabulary as conventions in the started reply
"""

import base64
import itertools
import json
import os
import sys
import time

# --own-words: the library's stop vocabulary, and the conventions entry declaring it.
OWN_WORDS = {"stop": "end", "length": "max", "tool_calls": "tools"}
CONVENTIONS = {
    "library": "toy",
    "protocols": {
        "openai-completions": {
            "source": "tests/stdio_toy_adapter.py OWN_WORDS",
            "stop_reasons": {mine: wire for wire, mine in OWN_WORDS.items()},
        }
    },
}


def cut(body, split):
    if "every" in split:
        n = split["every"]
        return [body[i : i + n] for i in range(0, len(body), n)] or [b""]
    bounds = [0] + split["cuts"] + [len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


def sse_events(chunks):
    """`data:` payloads as text, decoded only once an event is complete (UTF-8 safe)."""
    buf = b""
    for chunk in chunks:
        buf += chunk
        buf = buf.replace(b"\r\n", b"\n")
        while b"\n\n" in buf:
            raw, buf = buf.split(b"\n\n", 1)
            data = [line[5:].lstrip(b" ") for line in raw.split(b"\n") if line.startswith(b"data:")]
            if data:
                yield b"\n".join(data).decode("utf-8")
    # An event not ended by a blank line is incomplete: SSE discards it.


def run(case, own_words=False):
    chunks = cut(base64.b64decode(case["body"]), case["split"])
    if case["status"] >= 400:
        body = b"".join(chunks).decode("utf-8", "replace")
        try:
            message = json.loads(body)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = body
        return {"raised": {"name": "HTTPError", "message": message, "status": case["status"]}}
    text, calls, stop, usage, model, rid, done = "", {}, None, None, None, None, False
    for data in sse_events(chunks):
        if data == "[DONE]":
            done = True
            break
        obj = json.loads(data)
        if "error" in obj:
            return {"raised": {"name": "StreamError", "message": obj["error"].get("message", "")}}
        model, rid = obj.get("model") or model, obj.get("id") or rid
        if obj.get("usage"):
            u = obj["usage"]
            cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
            usage = {
                "input": u["prompt_tokens"] - cached,
                "output": u["completion_tokens"],
                "cache_read": cached,
                "cache_write": 0,
                "total": u.get("total_tokens"),
            }
        for choice in obj.get("choices") or []:
            delta = choice.get("delta") or {}
            text += delta.get("content") or ""
            for tc in delta.get("tool_calls") or []:
                call = calls.setdefault(tc.get("index", 0), {"id": None, "name": "", "args": ""})
                call["id"] = tc.get("id") or call["id"]
                fn = tc.get("function") or {}
                call["name"] += fn.get("name") or ""
                call["args"] += fn.get("arguments") or ""
            stop = choice.get("finish_reason") or stop
    content = [{"type": "text", "content": text}] if text else []
    for _, call in sorted(calls.items()):
        content.append(
            {"type": "tool_call", "id": call["id"], "name": call["name"], "arguments": call["args"]}
        )
    if not done and stop is None:
        return {"raised": {"name": "StreamError", "message": "stream ended before [DONE]"}}
    if own_words:
        stop = OWN_WORDS.get(stop, stop)
    return {
        "message": {
            "content": content,
            "stop_reason": stop,
            "usage": usage,
            "model": model,
            "response_id": rid,
        },
        "requests": 1,
    }


def main(argv):
    faults, noise, name, pid_file = {}, "--noise" in argv, "toy-python", None
    own_words, declare = "--own-words" in argv, "--declare" in argv
    for i, arg in enumerate(argv):
        if arg == "--fault":
            kind, _, n = argv[i + 1].partition("@")
            faults[int(n)] = kind
        if arg == "--name":
            name = argv[i + 1]
        if arg == "--pid-file":
            pid_file = argv[i + 1]
    out = sys.stdout
    runs = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["cmd"] == "stop":
            return 0
        if msg["cmd"] == "start":
            reply = {
                "version": 1,
                "implementation": {
                    "name": name,
                    "language": "python",
                    "version": "0.1",
                    "runtime": "python " + sys.version.split()[0],
                },
                "protocols": ["openai-completions"],
                "surface": "message",
            }
            if declare:
                reply["conventions"] = CONVENTIONS
            if pid_file:
                with open(pid_file, "a") as f:
                    f.write(f"{os.getpid()}\n")
        else:
            runs += 1
            fault = faults.get(runs)
            if fault == "crash":
                print("toy: crashing as asked", file=sys.stderr, flush=True)
                sys.exit(3)
            if fault == "hang":
                time.sleep(3600)
            if fault == "garbage":
                out.write('{"seq": oops\n')
                out.flush()
                continue
            try:
                reply = run(msg["case"], own_words)
            except Exception as exc:  # a bug in this adapter, not in the "library"
                reply = {"errored": {"message": f"{type(exc).__name__}: {exc}"}}
            reply["seq"] = msg["seq"] + (1 if fault == "badseq" else 0)
            if noise:
                out.write("toy: a library printing to stdout\n")
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
