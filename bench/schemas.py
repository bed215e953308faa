"""Schema benchmarks: payload matching over N distinct input schemas, and checking a card with
20 embedded schemas.

    .venv/bin/python bench/schemas.py --schemas 10000 --requests 2000

1. Seeding (once per database; ``--recreate`` starts over): N/2 synthetic agents, each card
   declaring two distinct object schemas (the schemas extension, ``application/json;schema=``
   input modes on two skills), ingested through the real ``card_ingest`` (card checks, snapshot,
   card index, schema index). Schemas draw 1-6 properties from a 300-name vocabulary with
   string/integer/number/boolean/array types, 1-3 required names, constraints (maxLength,
   minimum, enum, pattern), and ``additionalProperties: false`` on about half.
2. Matching: ``POST /api/v1/schemas/match`` through Django's full request stack in this process
   (``django.test.Client``: middleware, DRF, JSON). Payloads: 50% conform to a random indexed
   schema, 25% are that payload minus a required key, 25% random objects from the vocabulary.
   One pass with the validator cache emptied first (cold), then ``--requests`` warm requests.
   Reports p50/p99/mean per request, candidates after the prefilter, and agents matched.
3. Card check: ``cards.pipeline.check`` (parse, card rules, schema checks: metaschema,
   $refs, compile, examples) on a card with 20 embedded schemas, cold (analysis and validator
   caches emptied each time) and warm; and ``card_ingest`` of that card as a new agent.

Everything talks to 127.0.0.1 only; the database is a dedicated one (registry_bench_schemas).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (  # noqa: E402
    ensure_database,
    machine_summary,
    percentile,
    setup_django,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/registry_bench_schemas"
SCHEMAS_URI = (
    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1"
)
VOCABULARY = [
    f"{stem}{suffix}"
    for stem in (
        "name",
        "title",
        "city",
        "country",
        "query",
        "amount",
        "currency",
        "date",
        "start",
        "end",
        "limit",
        "offset",
        "language",
        "text",
        "url",
        "email",
        "phone",
        "user",
        "account",
        "order",
        "product",
        "price",
        "quantity",
        "score",
        "label",
        "kind",
        "status",
        "priority",
        "owner",
        "team",
    )
    for suffix in ("", "Id", "Code", "Name", "Type", "Count", "From", "To", "Min", "Max")
]
TYPES = ("string", "integer", "number", "boolean", "array")


def synth_schema(rng: random.Random, serial: int) -> dict[str, Any]:
    names = rng.sample(VOCABULARY, rng.randint(1, 6))
    properties: dict[str, Any] = {}
    for name in names:
        kind = rng.choice(TYPES)
        prop: dict[str, Any] = {"type": kind, "description": f"{name} of request {serial}"}
        if kind == "string" and rng.random() < 0.3:
            prop["maxLength"] = rng.randint(8, 200)
        if kind == "string" and rng.random() < 0.1:
            prop["enum"] = [f"{name}-{i}" for i in range(rng.randint(2, 5))]
        if kind == "string" and rng.random() < 0.1:
            prop["pattern"] = "^[A-Za-z0-9 ._-]+$"
        if kind in ("integer", "number") and rng.random() < 0.4:
            prop["minimum"] = 0
        if kind == "array":
            prop["items"] = {"type": "string"}
        properties[name] = prop
    required = sorted(rng.sample(names, rng.randint(1, min(3, len(names)))))
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Request {serial}",
        "type": "object",
        "properties": properties,
        "required": required,
    }
    if rng.random() < 0.5:
        schema["additionalProperties"] = False
    return schema


def conforming(rng: random.Random, schema: dict[str, Any]) -> dict[str, Any]:
    payload: dict[str, Any] = {}
    for name, prop in schema["properties"].items():
        if name not in schema["required"] and rng.random() < 0.5:
            continue
        kind = prop.get("type")
        if kind is None:
            continue  # a $ref'd member (the big card's address): optional, left out
        if "enum" in prop:
            payload[name] = rng.choice(prop["enum"])
        elif kind == "string":
            payload[name] = "value"
        elif kind == "integer":
            payload[name] = rng.randint(0, 100)
        elif kind == "number":
            payload[name] = rng.random() * 100
        elif kind == "boolean":
            payload[name] = rng.random() < 0.5
        else:
            payload[name] = ["a", "b"]
    return payload


def synth_card(serial: int, schemas: list[dict[str, Any]]) -> dict[str, Any]:
    names = [f"request{serial}x{i}" for i in range(len(schemas))]
    return {
        "name": f"Schema agent {serial}",
        "description": "An agent with structured inputs.",
        "supportedInterfaces": [
            {
                "url": f"https://agent{serial}.example.com/a2a",
                "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0",
            }
        ],
        "version": "1.0.0",
        "capabilities": {"extensions": [{"uri": SCHEMAS_URI}]},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "schemas": dict(zip(names, schemas, strict=True)),
        "skills": [
            {
                "id": f"skill-{i}",
                "name": f"Skill {i}",
                "description": "Takes structured input.",
                "tags": ["structured"],
                "inputModes": ["text/plain", f"application/json;schema={name}"],
                "outputModes": ["text/plain"],
            }
            for i, name in enumerate(names)
        ],
    }


def fetch_result(url: str, body: bytes) -> Any:
    from registry.http import FetchResult

    return FetchResult.local(url, body)


def ingest_new(url: str, card: dict[str, Any]) -> Any:
    from cards.crawling import card_ingest
    from cards.models import Agent

    agent = Agent.objects.create(url=url, card_url=url)
    card_ingest(agent_id=agent.pk, result=fetch_result(url, json.dumps(card).encode()))
    return agent


def seed(count: int, rng: random.Random) -> list[dict[str, Any]]:
    """Ingest count/2 agents with two schemas each; return every schema (also when seeded)."""
    from schemas_app.models import SchemaUse

    schemas = [synth_schema(rng, i) for i in range(count)]
    have = SchemaUse.objects.filter(role="input").values("document").distinct().count()
    if have >= count:
        print(f"seed: {have} input schemas already indexed")
        return schemas
    started = time.perf_counter()
    for serial in range(count // 2):
        card = synth_card(serial, schemas[2 * serial : 2 * serial + 2])
        ingest_new(f"https://agent{serial}.example.com/.well-known/agent-card.json", card)
        if serial and serial % 1000 == 0:
            print(f"seed: {serial} agents ({time.perf_counter() - started:.0f} s)", flush=True)
    elapsed = time.perf_counter() - started
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # what autovacuum does after a bulk load
    print(
        f"seed: {count // 2} agents, {count} schemas in {elapsed:.1f} s "
        f"({elapsed / (count // 2) * 1000:.1f} ms per card ingest)"
    )
    return schemas


def payloads(rng: random.Random, schemas: list[dict[str, Any]], n: int) -> list[Any]:
    out: list[Any] = []
    for _ in range(n):
        roll = rng.random()
        schema = rng.choice(schemas)
        if roll < 0.5:
            out.append(conforming(rng, schema))
        elif roll < 0.75:
            payload = conforming(rng, schema)
            payload.pop(schema["required"][0], None)
            out.append(payload)
        else:
            out.append({name: "value" for name in rng.sample(VOCABULARY, rng.randint(1, 5))})
    return out


def bench_matching(schemas: list[dict[str, Any]], requests: int, rng: random.Random) -> None:
    from django.test import Client

    from schemas_app.analysis import clear_caches
    from schemas_app.matching import match_payload

    client = Client(HTTP_HOST="localhost")  # an allowed host (testserver is not)
    bodies = payloads(rng, schemas, requests)

    def run(batch: list[Any]) -> tuple[list[float], list[int], list[int]]:
        times, matched, candidates = [], [], []
        for payload in batch:
            body = json.dumps({"payload": payload, "limit": 20})
            started = time.perf_counter()
            response = client.post("/api/v1/schemas/match", body, content_type="application/json")
            times.append((time.perf_counter() - started) * 1000)
            if response.status_code != 200:
                raise SystemExit(
                    f"match answered {response.status_code}: {response.content[:300]!r}"
                )
            data = response.json()
            matched.append(len(data["results"]))
            candidates.append(data["candidates"])
        return times, matched, candidates

    clear_caches()
    cold, _, _ = run(bodies[:200])
    warm, matched, candidates = run(bodies)
    conforming_hits = sum(1 for m in matched if m)
    print(
        f"\nmatching over {len(schemas)} indexed input schemas, {requests} requests "
        "(HTTP, in-process)"
    )
    print(
        f"  cold (validator cache empty, first 200): p50 {percentile(cold, 50):.2f} ms, "
        f"p99 {percentile(cold, 99):.2f} ms"
    )
    print(
        f"  warm: p50 {percentile(warm, 50):.2f} ms, p99 {percentile(warm, 99):.2f} ms, "
        f"mean {statistics.fmean(warm):.2f} ms, max {max(warm):.2f} ms"
    )
    print(
        f"  candidates after prefilter: median {statistics.median(candidates):.0f}, "
        f"p99 {percentile([float(c) for c in candidates], 99):.0f}; "
        f"requests with a match: {conforming_hits}/{requests}"
    )
    # The service alone, without the HTTP stack.
    service = []
    for payload in bodies[:500]:
        started = time.perf_counter()
        match_payload(payload, limit=20)
        service.append((time.perf_counter() - started) * 1000)
    print(
        f"  service only (match_payload, warm, 500): p50 {percentile(service, 50):.2f} ms, "
        f"p99 {percentile(service, 99):.2f} ms"
    )


def big_card(rng: random.Random, count: int = 20) -> dict[str, Any]:
    schemas = []
    for i in range(count):
        schema = synth_schema(rng, 900_000 + i)
        # Richer than the matching corpus: nested objects, $defs and a $ref, like real contracts.
        schema["$defs"] = {
            "address": {
                "type": "object",
                "properties": {
                    "street": {"type": "string", "maxLength": 200},
                    "city": {"type": "string"},
                    "postcode": {"type": "string", "pattern": "^[0-9A-Z -]{3,10}$"},
                },
                "required": ["city"],
            }
        }
        schema["properties"]["address"] = {"$ref": "#/$defs/address"}
        schemas.append(schema)
    card = synth_card(900_000, schemas)
    for skill, schema in zip(card["skills"], schemas, strict=True):
        skill["examples"] = [json.dumps(conforming(rng, schema)) for _ in range(3)]
    return card


def bench_card(rng: random.Random, runs: int) -> None:
    from cards.models import Agent
    from cards.pipeline import check as card_check
    from schemas_app.analysis import clear_caches

    card = big_card(rng)
    raw = json.dumps(card).encode()
    findings = card_check(raw=raw).findings
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        raise SystemExit(f"the benchmark card has errors: {errors[:3]}")
    cold, warm = [], []
    for _ in range(runs):
        clear_caches()
        started = time.perf_counter()
        card_check(raw=raw)
        cold.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        card_check(raw=raw)
        warm.append((time.perf_counter() - started) * 1000)
    ingest = []
    for i in range(min(runs, 50)):
        clear_caches()
        card["name"] = f"Big card {i}"
        started = time.perf_counter()
        agent = ingest_new(f"https://big{i}-{time.time_ns()}.example.com/card.json", card)
        ingest.append((time.perf_counter() - started) * 1000)
        Agent.objects.filter(pk=agent.pk).delete()
    print(
        f"\ncard with 20 embedded schemas ({len(raw)} bytes, {len(findings)} findings), {runs} runs"
    )
    print(
        f"  card_check cold (caches emptied): p50 {percentile(cold, 50):.2f} ms, "
        f"p99 {percentile(cold, 99):.2f} ms"
    )
    print(f"  card_check warm (same schemas seen before): p50 {percentile(warm, 50):.2f} ms")
    print(
        f"  card_ingest as a new agent, cold: p50 {percentile(ingest, 50):.2f} ms, "
        f"p99 {percentile(ingest, 99):.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--schemas", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=2_000)
    parser.add_argument("--card-runs", type=int, default=100)
    parser.add_argument("--recreate", action="store_true", help="drop and recreate the database")
    parser.add_argument("--seed", type=int, default=8785)
    args = parser.parse_args()

    ensure_database(args.database_url, recreate=args.recreate)
    setup_django(args.database_url, CELERY_TASK_ALWAYS_EAGER="true")
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    print("machine:", json.dumps(machine_summary()))
    rng = random.Random(args.seed)
    schemas = seed(args.schemas, rng)
    bench_matching(schemas, args.requests, random.Random(args.seed + 1))
    bench_card(random.Random(args.seed + 2), args.card_runs)


if __name__ == "__main__":
    main()
