"""Digest every door's answers on the corpus, or compare two digests (issue 48's check).

    .venv/bin/python scripts/door_snapshot.py write /tmp/before.json   # on the old commit
    .venv/bin/python scripts/door_snapshot.py write /tmp/after.json    # on the new one
    .venv/bin/python scripts/door_snapshot.py compare /tmp/before.json /tmp/after.json

``write`` runs tests/door_snapshot.py under pytest (the test database of DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/registry_doors); ``compare`` prints each door whose status,
content type or normalised body differs and exits 1 if any does. docs/architecture.md says how
the refactors of issue 48 were checked with it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write(target: Path) -> int:
    env = dict(os.environ)
    env.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/registry_doors")
    env.setdefault("REDIS_URL", "redis://127.0.0.1:6379/14")
    env.setdefault("DJANGO_SECRET_KEY", "door-snapshot-only")
    env["CELERY_TASK_ALWAYS_EAGER"] = "true"
    env["DOOR_SNAPSHOT_OUT"] = str(target.resolve())
    command = [sys.executable, "-m", "pytest", "tests/door_snapshot.py", "-q", "-p",
               "no:cacheprovider", "-p", "no:randomly", "--create-db"]  # fmt: skip
    return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


def compare(before: Path, after: Path) -> int:
    old = json.loads(before.read_text())
    new = json.loads(after.read_text())
    differ = 0
    for door in sorted(set(old) | set(new)):
        a, b = old.get(door), new.get(door)
        if a is None or b is None:
            print(f"{'only before' if b is None else 'only after'}: {door}")
            differ += 1
        elif (a["status"], a["type"], a["sha256"]) != (b["status"], b["type"], b["sha256"]):
            print(f"differs: {door}\n  before {a['status']} {a['head'][:120]!r}")
            print(f"  after  {b['status']} {b['head'][:120]!r}")
            differ += 1
    print(f"{len(old)} doors before, {len(new)} after, {differ} differ")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "write":
        return write(Path(argv[1]))
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
