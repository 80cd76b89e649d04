"""UHI serialization (issue 49 item 4): ``_to_uhi_``/``_from_uhi_`` round trips through
``uhi.io.json``, ``zip`` and ``hdf5`` with counts, variances, flow, names and labels, checked by
the uhi package's own schema validation; what boost-histogram and hist write reads here, and
what is written here reads there."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh

bh = pytest.importorskip("boost_histogram")
hist = pytest.importorskip("hist")
uhi_json = pytest.importorskip("uhi.io.json")
uhi_zip = pytest.importorskip("uhi.io.zip")
uhi_hdf5 = pytest.importorskip("uhi.io.hdf5")
uhi_schema = pytest.importorskip("uhi.schema")
h5py = pytest.importorskip("h5py")


def examples() -> dict[str, gh.Histogram]:
    rng = np.random.default_rng(7)
    x, y, w = rng.normal(size=500), rng.normal(size=500), rng.uniform(0.5, 2, 500)
    return {
        "regular": gh.Histogram(10, range=(-2, 2), name="pt", label="$p_T$ [GeV]").fill(x),
        "weighted": gh.Histogram([-3, -1, 0, 0.5, 3], weights=True, name="eta").fill(x, weights=w),
        "2-D": gh.Histogram([4, [0, 1, 3]], range=[(-1, 1), None], name=["a", "b"]).fill(x, y),
        "integer": gh.Histogram("integer", range=(-2, 3)).fill(np.round(x * 2)),
        "float32": gh.Histogram(5, range=(0, 1)).fill(np.float32(rng.random(50))),
        "nulls": gh.Histogram(3, range=(0, 3)).fill(pl.Series([0.5, None, np.nan, 9.0])),
    }


EXAMPLES = examples()


def assert_same(a: gh.Histogram, b: gh.Histogram) -> None:
    assert a == b
    np.testing.assert_array_equal(a.values(flow=True), b.values(flow=True))
    np.testing.assert_array_equal(a.variances(flow=True), b.variances(flow=True))
    assert a.flow == b.flow
    assert a.axes.name == b.axes.name and a.axes.label == b.axes.label
    assert [ax.kind for ax in a.axes] == [ax.kind for ax in b.axes]


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_schema_validates_what_is_written(name: str) -> None:
    data = json.loads(json.dumps(EXAMPLES[name], default=uhi_json.default))
    uhi_schema.validate_histogram(data)
    uhi_schema.validate({name: data})


@pytest.mark.parametrize("name", EXAMPLES)
def test_round_trip_through_json(name: str) -> None:
    h = EXAMPLES[name]
    text = json.dumps({name: h}, default=uhi_json.default)
    back = gh.Histogram._from_uhi_(json.loads(text, object_hook=uhi_json.object_hook)[name])
    assert_same(h, back)


@pytest.mark.parametrize("name", EXAMPLES)
def test_round_trip_through_zip_and_hdf5(name: str, tmp_path: Path) -> None:
    h = EXAMPLES[name]
    with zipfile.ZipFile(tmp_path / "h.zip", "w") as z:
        uhi_zip.write(z, "h", h)
    with zipfile.ZipFile(tmp_path / "h.zip") as z:
        assert_same(h, gh.Histogram._from_uhi_(uhi_zip.read(z, "h")))
    with h5py.File(tmp_path / "h.h5", "w") as f:
        uhi_hdf5.write(f.create_group("h"), h)
    with h5py.File(tmp_path / "h.h5") as f:
        assert_same(h, gh.Histogram._from_uhi_(uhi_hdf5.read(f["h"])))


def boost_examples() -> dict[str, Any]:
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=300), rng.normal(size=300)
    reg = bh.Histogram(bh.axis.Regular(8, -2, 2, metadata="m"))
    reg.fill(x)
    weighted = bh.Histogram(
        bh.axis.Variable([-2, 0, 1, 3]), bh.axis.Integer(-1, 2), storage=bh.storage.Weight()
    )
    weighted.fill(x, np.round(y).astype(int), weight=rng.uniform(0.5, 2, 300))
    noflow = bh.Histogram(bh.axis.Regular(4, 0, 1, underflow=False, overflow=False))
    noflow.fill(rng.random(40))
    h = hist.Hist.new.Reg(5, -1, 1, name="pt", label="$p_T$").Int64().fill(x)
    return {"regular": reg, "weighted 2-D": weighted, "no flow bins": noflow, "hist": h}


BOOST = boost_examples()


@pytest.mark.parametrize("name", BOOST)
def test_what_boost_histogram_and_hist_write_reads_here(name: str, tmp_path: Path) -> None:
    theirs = BOOST[name]
    with zipfile.ZipFile(tmp_path / "b.zip", "w") as z:
        uhi_zip.write(z, "b", theirs)
    with zipfile.ZipFile(tmp_path / "b.zip") as z:
        ours = gh.Histogram._from_uhi_(uhi_zip.read(z, "b"))
    flow = theirs.axes[0].traits.underflow
    view = theirs.view(flow=True)
    values = view.value if view.dtype.names else view
    if flow:
        np.testing.assert_array_equal(ours.values(flow=True), values)
    else:
        np.testing.assert_array_equal(ours.values(), values)
        assert ours.sum(flow=True) == ours.sum()
    for a, b in zip(ours.axes, theirs.axes):
        np.testing.assert_allclose(a.edges, b.edges, rtol=1e-12, atol=1e-12)
    if name == "hist":
        assert ours.axes[0].name == "pt" and ours.axes[0].label == "$p_T$"
    # And back: boost's Double storage (its default) reads as sums of weights.
    if name == "hist":
        assert hist.Hist(ours.to_boost()) == theirs


@pytest.mark.parametrize("name", EXAMPLES)
def test_what_is_written_here_reads_in_boost_histogram_and_hist(name: str) -> None:
    h = EXAMPLES[name]
    data = json.loads(json.dumps(h, default=uhi_json.default), object_hook=uhi_json.object_hook)
    theirs = bh.serialization.from_uhi(data)
    np.testing.assert_array_equal(h.values(flow=True), np.asarray(theirs.values(flow=True)))
    assert [a.__dict__["name"] for a in theirs.axes] == list(h.axes.name)
    as_hist = hist.Hist(theirs)
    assert as_hist.axes.name == h.axes.name
    kinds = {"regular": "Regular", "integer": "Integer", "variable": "Variable"}
    assert [type(a).__name__ for a in theirs.axes] == [kinds[a.kind.kind] for a in h.axes]


@pytest.mark.parametrize("name", ["regular", "weighted", "2-D"])
def test_uproot_writes_them_to_root_and_reads_them_back(name: str, tmp_path: Path) -> None:
    uproot = pytest.importorskip("uproot")
    h = EXAMPLES[name]
    with uproot.recreate(tmp_path / "h.root") as f:
        f["h"] = h
    theirs = uproot.open(tmp_path / "h.root")["h"]
    np.testing.assert_array_equal(theirs.values(flow=True), h.values(flow=True))
    np.testing.assert_allclose(theirs.variances(flow=True), h.variances(flow=True))
    for i, axis in enumerate(h.axes):
        np.testing.assert_allclose(theirs.axis(i).edges(), axis.edges, rtol=1e-15)
    # And into a Histogram again, through hist and UHI's schema.
    back = gh.Histogram._from_uhi_(theirs.to_hist()._to_uhi_())
    np.testing.assert_array_equal(back.values(flow=True), h.values(flow=True))


def test_view_is_boosts_view_read_only() -> None:
    h = EXAMPLES["weighted"]
    view = h.view(flow=True)
    assert view.dtype.names == ("value", "variance") and not view.flags.writeable
    np.testing.assert_array_equal(view["value"], h.to_boost().view(flow=True).value)
    np.testing.assert_array_equal(EXAMPLES["regular"].view(), EXAMPLES["regular"].counts)
