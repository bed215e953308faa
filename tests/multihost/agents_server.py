"""The "agents" host: the agent cards the registry crawls, served over plain HTTP from a
directory, on one or more ports (each port is an origin of its own).

``GET /<name>.json`` answers ``<directory>/<name>.json``; ``GET /slow/<seconds>/<name>.json``
answers the same after sleeping that long (a crawl caught in the middle). Every request is
written to ``<directory>/requests.jsonl`` when it arrives (``"at": "start"``) and when it is
answered (``"at": "end"``), with the client's address: which host fetched what, and when.

Standalone on purpose (no Django, nothing from the project): it is another machine's server.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_SLOW = re.compile(r"^/slow/(\d+(?:\.\d+)?)(/.*)$")
_NAME = re.compile(r"^/[A-Za-z0-9._-]+\.json$")


def serve(directory: Path, address: str, ports: list[int]) -> None:
    journal = (directory / "requests.jsonl").open("a", buffering=1)
    lock = threading.Lock()

    def note(handler: BaseHTTPRequestHandler, at: str, status: int = 0) -> None:
        line = {
            "time": time.time(),
            "at": at,
            "client": handler.client_address[0],
            "port": handler.server.server_address[1],
            "path": handler.path,
            "status": status,
        }
        with lock:
            journal.write(json.dumps(line) + "\n")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            note(self, "start")
            path = self.path
            slow = _SLOW.match(path)
            if slow:
                time.sleep(float(slow.group(1)))
                path = slow.group(2)
            file = directory / path.lstrip("/")
            if _NAME.match(path) and file.is_file():
                status, body = 200, file.read_bytes()
            else:
                status, body = 404, b'{"error": "not found"}'
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:  # the crawler's host went away meanwhile
                status = -1
            note(self, "end", status)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass  # the journal says it all

    servers = [ThreadingHTTPServer((address, port), Handler) for port in ports]
    for server in servers[1:]:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print("agents server ready", flush=True)
    servers[0].serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--directory", type=Path, required=True)
    parser.add_argument("--address", required=True)
    parser.add_argument("--port", type=int, action="append", required=True)
    args = parser.parse_args()
    serve(args.directory, args.address, args.port)


if __name__ == "__main__":
    main()
