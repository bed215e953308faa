"""Where the CPU of one fetch by id goes: the WSGI application called in-process, profiled.

Calls ``registry.wsgi.application`` directly with a WSGI environ (what gunicorn does, without
the socket; ``--through django`` calls Django's own application, without the hot reads), for
``--requests`` requests over a sample of agent ids, after a warm-up, with the production
middleware and the anonymous limiter on (its rate raised: one address sends all). Prints the
mean wall and CPU time per request and the cProfile functions by cumulative time; with
``--layers``, each middleware's own time per request instead (and the view's, and the WSGI
handler's outside them).

    .venv/bin/python bench/profile_by_id.py \\
        --database-url postgres://postgres@127.0.0.1:5432/registry_peer_ours_bench
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import process_cpu_seconds  # noqa: E402

# Sent with --compare to take the DRF view: no authentication class knows the scheme, so the
# request is as anonymous as without it, but cards/api/by_id.py leaves any Authorization to DRF.
THROUGH_DRF = {"HTTP_AUTHORIZATION": "Basic Y29tcGFyZTo="}


def environ(path: str, extra: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        **(extra or {}),
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "HTTP_ACCEPT": "*/*",
        "HTTP_USER_AGENT": "wrk",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }


def setup(database_url: str, redis_url: str) -> None:
    """Django with production settings against ``database_url``, the limiter on (its rate
    raised: one address sends all)."""
    os.environ.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        DJANGO_SECRET_KEY="bench-only-secret-not-for-production",
        DJANGO_DEBUG="false",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        REGISTRY_ANON_RATE="100000000/minute",
        DJANGO_SETTINGS_MODULE="registry.settings",
        REGISTRY_LOG_LEVEL="WARNING",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def backend_pid() -> int:
    """The process id of this thread's PostgreSQL backend (the requests run on this thread)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def agent_paths(template: str) -> list[str]:
    """``template`` filled with each of 500 agents' ids."""
    from cards.models import Agent

    ids = [str(pk) for pk in Agent.objects.values_list("pk", flat=True)[:500]]
    return [template.format(id=i) for i in ids]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--path-template", default="/api/v1/agents/{id}")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--no-profile", action="store_true", help="time only")
    parser.add_argument(
        "--layers",
        action="store_true",
        help="time each middleware (and the view) by itself: the time inside it less the time "
        "inside the next one, per request (no profile)",
    )
    parser.add_argument(
        "--compare",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="time the short cut (cards/api/by_id.py) and the DRF view, interleaved, ROUNDS "
        "rounds of --requests each, and print the medians (no profile)",
    )
    parser.add_argument(
        "--through",
        choices=("served", "django"),
        default="served",
        help="served: the application as served (registry/hot_reads.py in front: a plain fetch "
        "by id and /healthz skip the middleware); django: Django's own, every request through "
        "the middleware (as with REGISTRY_HOT_READS=off)",
    )
    args = parser.parse_args()
    setup(args.database_url, args.redis_url)
    layers = timed_layers() if args.layers else None
    from registry import wsgi

    application = wsgi.application if args.through == "served" else wsgi.django_application
    if layers is not None:
        application = wsgi.django_application  # the layers are the middleware's

    paths = agent_paths(args.path_template)
    statuses: dict[str, int] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc: Any = None) -> Any:
        statuses[status] = statuses.get(status, 0) + 1
        return None

    def run(n: int, extra: dict[str, str] | None = None) -> None:
        for k in range(n):
            result = application(environ(paths[k % len(paths)], extra), start_response)
            b"".join(result)
            close = getattr(result, "close", None)  # a hot read's answer is a plain list
            if close is not None:
                close()

    run(500)
    if args.compare:
        compare(run, args.requests, args.compare, statuses)
        return
    if layers is not None:
        print_layers(layers, run, args.requests)
        return
    statuses.clear()
    backend = backend_pid()
    wall, cpu = time.perf_counter(), time.process_time()
    server = process_cpu_seconds(backend)
    run(args.requests)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    server = process_cpu_seconds(backend) - server
    print(
        f"{args.requests} requests: {wall / args.requests * 1000:.3f} ms wall, "
        f"{cpu / args.requests * 1000:.3f} ms CPU per request, "
        f"{server / args.requests * 1000:.3f} ms of its PostgreSQL backend's; statuses {statuses}"
    )
    if args.no_profile:
        return
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    run(args.requests)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(args.top)
    print(out.getvalue())


class _Layer:
    """The time spent inside one layer of Django's middleware chain, with and without the
    layers inside it."""

    __slots__ = ("inner", "name", "ns")

    def __init__(self, name: str) -> None:
        self.name = name
        self.ns = 0
        self.inner: _Layer | None = None


def timed_layers() -> list[_Layer]:
    """Wrap each layer Django's handler builds (``convert_exception_to_response`` of every
    middleware and of the view's ``_get_response``) in a timer; the layers, outermost first,
    once the handler is built."""
    from django.core.handlers import base

    wrap = base.convert_exception_to_response
    made: list[_Layer] = []

    def timed(get_response: Any) -> Any:
        inner = wrap(get_response)
        target = getattr(get_response, "__self__", get_response)
        layer = _Layer(getattr(target, "__qualname__", None) or type(target).__qualname__)
        layer.inner = made[-1] if made else None
        made.append(layer)
        clock = time.perf_counter_ns

        def call(request: Any) -> Any:
            start = clock()
            try:
                return inner(request)
            finally:
                layer.ns += clock() - start

        return call

    base.convert_exception_to_response = timed  # type: ignore[assignment]
    return made


def print_layers(layers: list[_Layer], run: Callable[..., None], requests: int) -> None:
    for layer in layers:
        layer.ns = 0
    start = time.perf_counter_ns()
    run(requests)
    total = time.perf_counter_ns() - start
    print(f"{requests} requests, wall µs per request by layer (its own time, outermost first)")
    chain = sum(layer.ns for layer in layers[-1:])
    for layer in reversed(layers):
        own = layer.ns - (layer.inner.ns if layer.inner is not None else 0)
        print(f"{own / requests / 1000:9.2f}  {layer.name}")
    print(f"{(total - chain) / requests / 1000:9.2f}  WSGI handler outside the middleware")
    print(f"{total / requests / 1000:9.2f}  total")


def compare(
    run: Callable[[int, dict[str, str] | None], None],
    requests: int,
    rounds: int,
    statuses: dict[str, int],
) -> None:
    """Median CPU and wall per request of the short cut and of the DRF view, interleaved."""
    run(500, THROUGH_DRF)
    times: dict[str, list[tuple[float, float]]] = {"short cut": [], "DRF view": []}
    for number in range(rounds):
        order = [("short cut", None), ("DRF view", THROUGH_DRF)]
        for name, extra in order if number % 2 == 0 else order[::-1]:
            wall, cpu = time.perf_counter(), time.process_time()
            run(requests, extra)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            times[name].append((wall / requests * 1000, cpu / requests * 1000))
    print(f"{rounds} rounds of {requests} requests each, interleaved; statuses {statuses}")
    print("path        CPU ms/request (median, min, max)   wall ms/request (median)")
    for name, rows in times.items():
        cpus = [c for _, c in rows]
        wall = statistics.median(w for w, _ in rows)
        print(
            f"{name:10s}  {statistics.median(cpus):.3f} {min(cpus):.3f} {max(cpus):.3f}"
            f"{'':17s}{wall:.3f}"
        )
    short, full = (statistics.median(c for _, c in times[n]) for n in times)
    print(f"short cut / DRF view CPU: {short / full:.2f}x")


if __name__ == "__main__":
    main()
