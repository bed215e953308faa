"""The snapshot's float16 skill rows read as float32 (search/index/snapshot.py): numkong's
conversion gives exactly numpy's values, on every kind of row a snapshot can hold."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from search.index import snapshot


def _rows() -> np.ndarray:
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((9, snapshot.DIM)).astype(np.float16)
    # the edges of float16: the smallest subnormal, the largest finite, zero of both signs
    rows[0, :6] = [np.float16(6e-8), np.float16(-6e-8), 65504, -65504, 0.0, -0.0]
    rows[1, :3] = [np.inf, -np.inf, np.nan]
    return rows


@pytest.mark.parametrize(
    "pick",
    [
        lambda rows: rows,
        lambda rows: rows[:1],
        lambda rows: rows[:0],
        lambda rows: rows[::2],  # not contiguous
        lambda rows: rows[[4, 0, 7]],
    ],
    ids=["all", "one", "none", "strided", "gathered"],
)
def test_float16_rows_read_as_numpy_reads_them(pick) -> None:
    rows = pick(_rows())
    read = snapshot.float32_rows(rows)
    assert read.dtype == np.float32 and read.shape == rows.shape
    np.testing.assert_array_equal(read, rows.astype(np.float32))  # NaN where NaN, bit for bit


def test_float32_rows_are_left_as_they_are() -> None:
    rows = np.arange(2 * snapshot.DIM, dtype=np.float32).reshape(2, snapshot.DIM)
    assert snapshot.float32_rows(rows) is rows


def test_without_numkong_numpy_converts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numkong", None)  # import numkong raises ImportError
    rows = _rows()
    np.testing.assert_array_equal(snapshot.float32_rows(rows), rows.astype(np.float32))
