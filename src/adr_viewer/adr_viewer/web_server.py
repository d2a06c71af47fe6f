"""The page and its data over HTTP (stdlib ``http.server`` in a daemon thread): ``/`` the page, ``/state.json`` the
live state. Read-only; binds to localhost unless told otherwise."""
from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

PAGE = "web/index.html"


def page_bytes() -> bytes:
    return resources.files("adr_viewer").joinpath(PAGE).read_bytes()


class WebServer:
    def __init__(self, host: str, port: int, snapshot: Callable[[], dict[str, Any]]) -> None:
        page = page_bytes()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                path = self.path.split("?", 1)[0]
                if path in ("/", "/index.html"):
                    self._send(200, "text/html; charset=utf-8", page)
                elif path == "/state.json":
                    self._send(200, "application/json", json.dumps(snapshot(), allow_nan=False).encode())
                else:
                    self._send(404, "text/plain; charset=utf-8", b"not found\n")

            def _send(self, status: int, content_type: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:  # the node logs instead; no per-request noise
                pass

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="adr_viewer_http", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
