"""The snapshot through PostgreSQL, for machines without a shared disk.

The worker that writes a snapshot also stores its files in the database, in chunks of
:data:`CHUNK_BYTES` (``VectorSnapshotPart`` rows, one transaction, ``meta.json`` last: its row
marks the snapshot complete). A process on another machine that finds a newer published
snapshot than its own copies it into its machine's directory once (:func:`fetch`), and makes
it current.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
from pathlib import Path
from typing import Any

from django.db import transaction

from search.index import snapshot
from search.models import VectorSnapshotPart

logger = logging.getLogger(__name__)

CHUNK_BYTES = 8 << 20  # a published snapshot file is stored in chunks of this size


def published_name() -> str | None:
    """The newest snapshot published to the database (complete: its meta.json is there)."""
    row = (
        VectorSnapshotPart.objects.filter(file="meta.json")
        .order_by("-id")
        .values_list("snapshot", flat=True)
        .first()
    )
    return row or None


def publish(target: Path, keep: set[str]) -> None:
    """Store the files of the snapshot in ``target`` in the database (one transaction, meta.json
    last), and drop published snapshots other than ``keep``."""
    with transaction.atomic():
        for file in (*snapshot.FILES, "meta.json"):
            data = (target / file).read_bytes()
            VectorSnapshotPart.objects.bulk_create(
                VectorSnapshotPart(
                    snapshot=target.name, file=file, chunk=i, data=data[start : start + CHUNK_BYTES]
                )
                for i, start in enumerate(range(0, max(len(data), 1), CHUNK_BYTES))
            )
        VectorSnapshotPart.objects.exclude(snapshot__in=keep | {target.name}).delete()


def fetch(name: str) -> bool:
    """Copy the published snapshot ``name`` into this machine's directory and make it current;
    False when it is gone meanwhile. One process of the machine copies, the others wait."""
    where = snapshot.directory()
    where.mkdir(parents=True, exist_ok=True)
    with open(where / ".fetch.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (where / name / "meta.json").exists():
                partial = where / f".{name}.{os.getpid()}"
                shutil.rmtree(partial, ignore_errors=True)
                partial.mkdir()
                files: dict[str, Any] = {}
                parts = (
                    VectorSnapshotPart.objects.filter(snapshot=name)
                    .order_by("file", "chunk")
                    .values_list("file", "data")
                    .iterator(chunk_size=4)
                )
                for file, data in parts:
                    if file not in files:
                        files[file] = open(partial / file, "wb")  # noqa: SIM115 - closed below
                    files[file].write(bytes(data))
                for handle in files.values():
                    handle.close()
                if set(files) != {*snapshot.FILES, "meta.json"}:
                    shutil.rmtree(partial, ignore_errors=True)
                    return False
                os.replace(partial, where / name)
                logger.info("vector index snapshot %s copied from the database", name)
            if snapshot.current_name() != name:
                snapshot.make_current(where, name)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return True
