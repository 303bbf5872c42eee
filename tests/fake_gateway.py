"""A stand-in gateway for the proxy adapter's tests: a pass-through on 127.0.0.1.

``python fake_gateway.py PORT UPSTREAM_URL MODE`` forwards every POST to the same path
upstream and copies the answer back as it arrives, so a real process with a real port
stands where LiteLLM or Portkey would. The modes are the failures the lifecycle tests
need: ``ok``, ``never-ready`` (readiness answers 503 forever), ``exit`` (dies before
listening), ``die-on-request`` (dies when the first request comes), ``buffer`` (holds the
whole upstream body, then sends it), ``clean-on-cut`` (an upstream that drops the
connection gets a clean end towards the client).
"""

from __future__ import annotations

import http.client
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

PORT = int(sys.argv[1])
UPSTREAM = urlsplit(sys.argv[2])
MODE = sys.argv[3]


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
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        conn = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=30)
        conn.request("POST", self.path, body=body, headers={"content-type": "application/json"})
        resp = conn.getresponse()
        self.send_response(resp.status)
        for name in ("content-type", "retry-after"):
            if resp.getheader(name):
                self.send_header(name, resp.getheader(name) or "")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        pieces: list[bytes] = []
        try:
            while True:
                piece = resp.read1(65536)
                if not piece:
                    break
                if MODE == "buffer":
                    pieces.append(piece)
                else:
                    self._chunk(piece)
        except http.client.IncompleteRead:
            if MODE != "clean-on-cut":
                self.close_connection = True
                self.connection.shutdown(2)
                return
        if pieces:
            self._chunk(b"".join(pieces))
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
