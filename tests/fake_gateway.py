"""A stand-in gateway for the proxy adapter's tests: a pass-through on 127.0.0.1.

``python fake_gateway.py PORT UPSTREAM_URL MODE`` forwards every POST to the same path
upstream and copies the answer back as it arrives, so a real process with a real port
stands where LiteLLM or Portkey would. The modes are the failures the lifecycle tests
need: ``ok``, ``never-ready`` (readiness answers 503 forever), ``exit`` (dies before
listening), ``die-on-request`` (dies when the first request comes), ``segfault-once:PATH``
(killed by SIGSEGV on the first request of the first process, which leaves PATH behind),
``internal-500-once:PATH`` (answers 500 to the first request without calling the upstream,
leaving PATH behind), ``internal-500`` (so to every request).

And the ways a gateway can be wrong, or right, about streaming and cuts. ``ok`` forwards
each upstream read at once and, when the upstream connection drops (a FIN, a reset, a
close inside a chunk), drops the client's too without the terminating chunk: right.
``error-on-cut`` instead sends an error event of the client protocol, then ends cleanly:
also right. ``clean-on-cut`` ends the client's response with the terminating chunk and
no error: a complete message for a stream that was not (wrong). ``buffer`` holds the
whole upstream body, then sends it (wrong in any pacing). ``hold-small-reads[:N]``
decides per transport read: a read of a whole event or more (``SMALL`` bytes) goes out at
once with whatever was held, a smaller one is held until N bytes (4096 by default) are
held or the upstream ends. Event by event it streams; byte by byte it holds the stream
(wrong, and only the byte-paced run shows it). ``whole-line`` starts streaming only once a
single read (here: one upstream chunk, as a gateway reading each write as it comes sees
it) holds a whole line with content, and holds everything before: a body written in half
lines never shows one, so it holds the whole stream (wrong; the slow line-straddling run
shows it even where the byte-paced run's merged reads would let it through).
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

PORT = int(sys.argv[1])
UPSTREAM = urlsplit(sys.argv[2])
MODE, _, HOLD = sys.argv[3].partition(":")
HOLD_BYTES = int(HOLD) if HOLD.isdigit() else 4096
EVENT_END = re.compile(rb"\r?\n\r?\n")
SMALL = 16  # a read below this is "small" to hold-small-reads
ERROR_EVENTS = {
    "/v1/messages": b'event: error\ndata: {"type": "error", "error": {"type": "api_error", "message": "upstream connection lost"}}\n\n',
    "/v1/chat/completions": b'data: {"error": {"message": "upstream connection lost", "type": "server_error"}}\n\n',
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        sys.stdout.write("fake gateway: " + (format % args) + "\n")
        sys.stdout.flush()

    def do_GET(self) -> None:
        status = 503 if MODE == "never-ready" else 200
        data = b"not yet" if status == 503 else b"ready"
        self.send_response(status)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        if MODE == "die-on-request":
            os._exit(9)
        if MODE == "segfault-once" and not os.path.exists(HOLD):
            open(HOLD, "w").close()
            os.kill(os.getpid(), signal.SIGSEGV)
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if MODE == "internal-500" or (MODE == "internal-500-once" and not os.path.exists(HOLD)):
            if HOLD:
                open(HOLD, "w").close()
            data = b'{"error":{"message":"<ContextVar name=\'service_target\'>","code":"500"}}'
            self.send_response(500)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        conn = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=30)
        conn.request("POST", self.path, body=body, headers={"content-type": "application/json"})
        resp = conn.getresponse()
        self.send_response(resp.status)
        for name in ("content-type", "retry-after"):
            if resp.getheader(name):
                self.send_header(name, resp.getheader(name) or "")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        held: list[bytes] = []
        committed = MODE != "whole-line"
        try:
            while True:
                piece = resp.read1(65536)
                if not piece:
                    break
                if MODE == "buffer":
                    held.append(piece)
                elif MODE == "error-on-cut":
                    # Whole events only, so the error event never lands inside a cut one.
                    held.append(piece)
                    data = b"".join(held)
                    at = max((m.end() for m in EVENT_END.finditer(data)), default=0)
                    if at:
                        self._chunk(data[:at])
                    held = [data[at:]] if data[at:] else []
                elif not committed:
                    at_line_start = not held or held[-1].endswith(b"\n")
                    lines = piece.split(b"\n")[:-1]  # each followed by a newline in this read
                    whole = lines if at_line_start else lines[1:]
                    committed = any(line.strip() for line in whole)
                    held.append(piece)
                    if committed:
                        self._chunk(b"".join(held))
                        held = []
                elif (
                    MODE == "hold-small-reads"
                    and len(piece) < SMALL
                    and sum(map(len, held)) + len(piece) < HOLD_BYTES
                ):
                    held.append(piece)
                else:
                    self._chunk(b"".join([*held, piece]))
                    held = []
        except (http.client.IncompleteRead, OSError):
            if MODE == "error-on-cut":
                self._chunk(ERROR_EVENTS[self.path])  # the cut event's part is dropped
                held = []
            elif held:
                self._chunk(b"".join(held))
                held = []
            if MODE not in ("error-on-cut", "clean-on-cut"):
                self.close_connection = True
                self.connection.shutdown(2)
                return
        if held:
            self._chunk(b"".join(held))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


if __name__ == "__main__":
    if MODE == "exit":
        print("fake gateway: refusing to start (mode exit)", flush=True)
        sys.exit(3)
    ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
