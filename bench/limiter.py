"""The anonymous limiter's own cost: CPU per request of ``registry.limits.hit`` against Redis.

Three ways, in one run, medians over ``--runs``:

- ``off``: no rate (the floor: the function returns at once);
- ``every request``: the batch forced to 1, one Redis round trip a request (the limiter before
  batching);
- ``batched``: as served (a batch of up to 16 hits per round trip, docs/configuration.md).

Example::

    .venv/bin/python bench/limiter.py --redis-url redis://127.0.0.1:6379/9 --hits 20000 --runs 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--hits", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--clients", type=int, default=16, help="client addresses in turn")
    args = parser.parse_args()
    os.environ["REDIS_URL"] = args.redis_url
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-not-for-serving")
    os.environ.setdefault("DJANGO_DEBUG", "true")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
    import django

    django.setup()
    from django.core.cache import cache

    from registry import limits
    from registry.rates import Rate

    rate = Rate.parse("100000000/minute")
    clients = [f"198.51.100.{i}" for i in range(args.clients)]

    def run(mode: str) -> float:
        cache.clear()
        limits.reset()
        saved = limits.BATCH_MAX
        limits.BATCH_MAX = 1 if mode == "every request" else saved
        try:
            started = time.process_time()
            for i in range(args.hits):
                limits.hit("anon", clients[i % len(clients)], None if mode == "off" else rate)
            return (time.process_time() - started) / args.hits * 1e6
        finally:
            limits.BATCH_MAX = saved

    results: dict[str, list[float]] = {"off": [], "every request": [], "batched": []}
    for _ in range(args.runs):
        for mode in results:  # interleaved
            results[mode].append(run(mode))
    print(f"{args.hits} hits x {args.runs} runs, {args.clients} clients, Redis {args.redis_url}")
    print(f"{'mode':<15}{'CPU us/request (median)':>26}{'min':>10}{'max':>10}")
    for mode, values in results.items():
        print(
            f"{mode:<15}{statistics.median(values):>26.1f}{min(values):>10.1f}{max(values):>10.1f}"
        )


if __name__ == "__main__":
    main()
