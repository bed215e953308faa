"""Instructions per request of the WSGI application in-process, counted by callgrind.

Timings on a shared machine move by ±20% between identical runs; the instructions a request
executes do not. This runs ``registry.wsgi.application`` (as bench/profile_by_id.py does, limiter
on) under ``valgrind --tool=callgrind`` twice, with ``--warm`` and ``--warm + --requests``
requests, and prints the difference divided by ``--requests``: start-up and warm-up cancel out.

    .venv/bin/python bench/request_instructions.py \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_bench_10k \\
        --path-template /healthz [--django-receivers]

``--django-receivers`` connects again the receivers registry/request_cycle.py leaves out
(``reset_queries``, ``close_caches``), to measure what they cost with the same code.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def child(args: argparse.Namespace) -> None:
    """Run inside valgrind: set up, warm up, serve ``args.count`` requests."""
    sys.path.insert(0, str(ROOT))
    from bench.profile_by_id import agent_paths, environ, setup

    setup(args.database_url, args.redis_url)
    from django.core import signals
    from django.core.cache import close_caches
    from django.db import reset_queries

    from registry.wsgi import application

    if args.django_receivers:
        signals.request_started.connect(reset_queries)
        signals.request_finished.connect(close_caches)
    paths = agent_paths(args.path_template) or ["/healthz"]

    def start_response(status: str, headers: list[tuple[str, str]], exc: Any = None) -> Any:
        return None

    for k in range(args.warm + args.count):
        result = application(environ(paths[k % len(paths)]), start_response)
        b"".join(result)
        result.close()


def instructions(args: argparse.Namespace, count: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
            sys.executable, __file__, "--child", "--count", str(count),
            "--database-url", args.database_url, "--redis-url", args.redis_url,
            "--path-template", args.path_template, "--warm", str(args.warm),
        ] + (["--django-receivers"] if args.django_receivers else [])  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind said no total:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--path-template", default="/api/v1/agents/{id}")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--warm", type=int, default=300)
    parser.add_argument("--django-receivers", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    base = instructions(args, 0)
    total = instructions(args, args.requests)
    print(
        f"{args.path_template}: {(total - base) / args.requests:,.0f} instructions per request "
        f"({args.requests} requests after {args.warm} of warm-up"
        f"{', Django receivers connected' if args.django_receivers else ''})"
    )


if __name__ == "__main__":
    main()
