"""A small HTTP/1.1 keep-alive load generator, for machines without wrk (docs/benchmarks.md).

    .venv/bin/python scripts/http_load.py http://127.0.0.1:8000/healthz -c 16 -d 10 -p 2

Opens ``-c`` keep-alive connections spread over ``-p`` processes, each sending GET requests
back to back for ``-d`` seconds (after ``--warmup`` seconds not counted), and prints requests
per second, p50/p99 latency and the count of non-2xx answers. Python is slower than wrk: compare
runs of this script with each other, not with wrk's numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import time
from urllib.parse import urlsplit


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bool]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip().lower()
    if "content-length" in headers:
        await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding") == "chunked":
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    return status, headers.get("connection") == "close"


async def _connection(
    host: str,
    port: int,
    request: bytes,
    start: float,
    stop: float,
    out: list[float],
    bad: list[int],
) -> None:
    reader: asyncio.StreamReader | None = None
    writer: asyncio.StreamWriter | None = None
    while time.monotonic() < stop:
        if writer is None:
            reader, writer = await asyncio.open_connection(host, port)
        assert reader is not None
        sent = time.monotonic()
        writer.write(request)
        try:
            status, close = await _read_response(reader)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            writer = None
            bad[0] += 1
            continue
        done = time.monotonic()
        if done >= start:
            out.append(done - sent)
            if not 200 <= status < 300:
                bad[0] += 1
        if close:
            writer.close()
            writer = None
    if writer is not None:
        writer.close()


def _process(url: str, connections: int, warmup: float, duration: float) -> tuple[list[float], int]:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: */*\r\n\r\n".encode()
    latencies: list[float] = []
    bad = [0]

    async def run() -> None:
        start = time.monotonic() + warmup
        stop = start + duration
        await asyncio.gather(
            *(
                _connection(host, port, request, start, stop, latencies, bad)
                for _ in range(connections)
            )
        )

    asyncio.run(run())
    return latencies, bad[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("-c", "--connections", type=int, default=16)
    parser.add_argument("-d", "--duration", type=float, default=10.0)
    parser.add_argument("-p", "--processes", type=int, default=2)
    parser.add_argument("--warmup", type=float, default=2.0)
    args = parser.parse_args()
    per = [args.connections // args.processes] * args.processes
    for index in range(args.connections % args.processes):
        per[index] += 1
    with multiprocessing.Pool(args.processes) as pool:
        results = pool.starmap(
            _process, [(args.url, count, args.warmup, args.duration) for count in per]
        )
    latencies = sorted(value for values, _ in results for value in values)
    bad = sum(count for _, count in results)
    if not latencies:
        raise SystemExit("no request completed")

    def percentile(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    print(
        f"{args.url}  {len(latencies) / args.duration:,.0f} req/s  p50 {percentile(0.5):.1f} ms"
        f"  p99 {percentile(0.99):.1f} ms  non-2xx/errors {bad}  ({args.connections} connections,"
        f" {args.processes} processes, {args.duration:g} s)"
    )


if __name__ == "__main__":
    main()
