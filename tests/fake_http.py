"""A local HTTP server whose answers a test sets, recording every request: a stand-in for
instance metadata services and the Kubernetes API in the tests of the scripts that call them."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

Answer = Callable[[str, str, dict[str, str], Any], tuple[int, Any]]
"""(method, path, lower-cased headers, body) -> (status, reply: text or JSON-able)."""


class Fake(ThreadingHTTPServer):
    """An HTTP server whose answers a test sets, recording every request."""

    def __init__(self, answer: Answer):
        self.answer = answer
        self.seen: list[tuple[str, str, dict[str, str], Any]] = []
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Fake

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw.startswith(b"{") else raw.decode()
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.seen.append((self.command, self.path, headers, body))
        status, reply = self.server.answer(self.command, self.path, headers, body)
        data = reply.encode() if isinstance(reply, str) else json.dumps(reply).encode()
        self.send_response(status)
        if not isinstance(reply, str):  # as real JSON APIs label theirs (SDKs check it)
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def serve() -> Iterator[Callable[..., Fake]]:
    servers: list[Fake] = []

    def start(answer: Answer) -> Fake:
        server = Fake(answer)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
