"""The Histogram's limits: counts past 2^63, merges past 2^64, hostile pickled states, sixteen
threads filling one histogram."""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

import polars_gpu_hist as gh


def test_merging_past_two_to_the_64_raises_overflow() -> None:
    big = gh.Histogram([0, 1])
    big._core = gh._internal.Histogram.from_bytes(_state_with_count(2**63 - 1))
    with pytest.raises(OverflowError):
        big + big + big


def _state_with_count(count: int) -> bytes:
    h = gh.Histogram([0, 1])
    state = pickle.loads(h._core.to_bytes())
    state["counts"] = np.array([count], dtype="<u8").tobytes()
    return pickle.dumps(state, protocol=5)


def test_counts_of_2_to_the_63_and_more_round_trip() -> None:
    h = gh.Histogram([0, 1])
    h._core = gh._internal.Histogram.from_bytes(_state_with_count(2**64 - 2))
    back = pickle.loads(pickle.dumps(h))
    assert back.counts.tolist() == [2**64 - 2]


def test_a_hostile_state_is_refused_before_allocating() -> None:
    h = gh.Histogram(4, range=(0, 1))
    state = pickle.loads(h._core.to_bytes())
    state["axes"][0]["bins"] = 2**40
    with pytest.raises(ValueError):
        gh._internal.Histogram.from_bytes(pickle.dumps(state, protocol=5))


def test_sixteen_threads_fill_one_histogram() -> None:
    h = gh.Histogram(10, range=(0, 1))
    data = [np.random.default_rng(i).random(20_000) for i in range(16)]
    errors: list[BaseException] = []

    def fill(x: np.ndarray) -> None:
        try:
            for part in np.array_split(x, 4):
                h.fill(part)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=fill, args=(x,)) for x in data]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    expected, _ = np.histogram(np.concatenate(data), 10, range=(0, 1))
    assert h.counts.tolist() == expected.tolist()
