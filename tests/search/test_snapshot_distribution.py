"""The vector index snapshot reaches web processes on other machines through PostgreSQL
(docs/search.md, "The vector index"): a worker and two web processes, each with its own
``REGISTRY_EMBEDDING_DIR`` (no shared disk), on the real database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from cards.models import Agent
from search.embedding import model, store
from search.models import VectorSnapshotPart
from tests.factories import agent_from_card

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not model.available(), reason="the embedding model is not installed"),
]

DEMO = Path(__file__).resolve().parents[2] / "cards" / "demo"
ROOT = Path(__file__).resolve().parents[2]

WORKER = """
import django; django.setup()
from search.index import writing
print(json.dumps({"saved": writing.save_snapshot()}))
"""
WEB = """
import django; django.setup()
from search.embedding import model
from search.index import vectors
index = vectors.index()
index.refresh(force=True)
found = index.nearest(model.embed_query("will it rain tomorrow"), 1)
print(json.dumps({
    "snapshot": index.snapshot.name,
    "in_snapshot": len(index.snapshot.ids),
    "delta": len(index.delta),
    "nearest": str(found[0][0]) if found else None,
}))
"""


def _run(code: str, directory: Path) -> dict[str, Any]:
    settings = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": (
            f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:"
            f"{settings['PORT'] or 5432}/{settings['NAME']}"
        ),
        "REGISTRY_EMBEDDING_DIR": str(directory),
        "DJANGO_SETTINGS_MODULE": "registry.settings",
    }
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + code],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_two_web_processes_on_other_disks_get_the_workers_snapshot(tmp_path: Path) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the distribution is tested on PostgreSQL")
    agents = [
        agent_from_card(p.read_bytes(), url=f"https://{p.stem}.dist.example/.well-known/a.json")
        for p in sorted(DEMO.glob("*.json"))
    ]
    store.embed_agents([a.pk for a in agents])
    weather = next(a for a in agents if "weather" in a.url)

    saved = _run(WORKER, tmp_path / "worker")
    assert saved["saved"] == len(agents)
    assert VectorSnapshotPart.objects.filter(file="meta.json").count() == 1
    for web in ("web-a", "web-b"):
        seen = _run(WEB, tmp_path / web)
        # The snapshot was copied from the database: nothing left to read as delta.
        assert seen["in_snapshot"] == len(agents) and seen["delta"] == 0, seen
        assert seen["snapshot"] and seen["nearest"] == str(weather.pk)
        assert (tmp_path / web / "index").is_dir()
    first = seen["snapshot"]

    # A change, a new snapshot from the worker: the web processes follow.
    Agent.objects.filter(pk=weather.pk).update(description="Sourdough baking recipes.")
    store.embed_agents([weather.pk], force=True)
    assert _run(WORKER, tmp_path / "worker")["saved"] == len(agents)
    again = _run(WEB, tmp_path / "web-a")
    assert again["snapshot"] != first and again["delta"] == 0
    # Only the newest two published snapshots are kept.
    names = set(VectorSnapshotPart.objects.values_list("snapshot", flat=True))
    assert again["snapshot"] in names and len(names) <= 2
