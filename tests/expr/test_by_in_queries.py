"""`by=` wherever the expression can be written: lazy queries on every engine, beside other
aggregations, `over`, `with_columns` as Polars' `hist` allows it, categorical and float keys."""

from __future__ import annotations

import polars as pl
import pytest


@pytest.mark.parametrize("engine", ["auto", "in-memory", "streaming"])
def test_by_works_in_lazy_queries_with_every_engine(engine: str) -> None:
    df = pl.DataFrame({"x": [0.1, 0.2, 0.8, 0.9, 0.5], "g": [1, 2, 1, 2, 1]})
    expr = pl.col("x").gpu_hist.histogram(bins=4, range=(0, 1), by="g", device="cpu")
    eager = df.select(expr)
    lazy = df.lazy().select(expr).collect(engine=engine)
    assert lazy.equals(eager)
    assert eager.unnest("x")["g"].to_list() == [1] * 4 + [2] * 4


ENGINES = ["auto", "in-memory", "streaming"]


def _collect(frame: pl.DataFrame, engine: str | None, *exprs: pl.Expr) -> pl.DataFrame:
    if engine is None:
        return frame.select(*exprs)
    return frame.lazy().select(*exprs).collect(engine=engine)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", [None, *ENGINES])
def test_by_beside_other_aggregations_in_select(engine: str | None) -> None:
    df = pl.DataFrame({"x": [0.1, 0.2, 0.8, 0.9, 0.5], "g": [1, 2, 1, 2, 1]})
    hist = pl.col("x").gpu_hist.histogram(bins=2, range=(0, 1), by="g", device="cpu")
    out = _collect(df, engine, hist, pl.col("x").sum().alias("total"), pl.len().alias("rows"))
    assert out.height == 4
    assert out["total"].to_list() == [pytest.approx(2.5)] * 4
    assert out["rows"].to_list() == [5] * 4
    assert out.unnest("x")["count"].to_list() == [1, 2, 1, 1]


@pytest.mark.parametrize("engine", [None, *ENGINES])
def test_by_over_groups_with_explode(engine: str | None) -> None:
    df = pl.DataFrame(
        {"x": [0.1, 0.2, 0.8, 0.9, 0.5, 0.6], "k": [1, 2, 1, 2, 1, 1], "g": ["a"] * 3 + ["b"] * 3}
    )
    hist = pl.col("x").gpu_hist.histogram(bins=2, range=(0, 1), by="k", device="cpu")
    out = _collect(df, engine, hist.over("g", mapping_strategy="explode")).unnest("x")
    expected = pl.concat([df.filter(pl.col("g") == g).select(hist).unnest("x") for g in ["a", "b"]])
    assert out.columns == ["k", "bin_start", "bin_end", "count"]
    assert out.sort("k", "bin_start").equals(expected.sort("k", "bin_start"))
    # And per group in agg: each group's histogram, the key named as in the query.
    agg = df.group_by("g", maintain_order=True).agg(hist).explode("x").unnest("x")
    assert agg.drop("g").equals(expected)


@pytest.mark.parametrize("engine", [None, *ENGINES])
def test_a_histogram_cannot_sit_beside_the_frame_in_with_columns_as_polars_hist(
    engine: str | None,
) -> None:
    # A histogram has its own length (groups x bins), so, as with Polars' own `hist`, it fits
    # in with_columns only where that length happens to equal the frame's: Polars raises a
    # ShapeError otherwise (docs/guides/dataframes.md: use select, or group_by().agg()).
    df = pl.DataFrame({"x": [0.1, 0.2, 0.8, 0.9, 0.5], "g": [1, 2, 1, 2, 1]})
    ours = pl.col("x").gpu_hist.histogram(bins=2, range=(0, 1), by="g", device="cpu")
    polars = pl.col("x").hist(bin_count=3)

    def with_columns(expr: pl.Expr) -> pl.DataFrame:
        if engine is None:
            return df.with_columns(expr.alias("h"))
        return df.lazy().with_columns(expr.alias("h")).collect(engine=engine)  # type: ignore[arg-type]

    for expr in (ours, polars):
        with pytest.raises(pl.exceptions.ShapeError):
            with_columns(expr)
    # Lengths that agree (4 rows: 2 groups x 2 bins) are accepted by both.
    df = df.head(4)
    assert with_columns(ours).height == 4
    assert df.with_columns(pl.col("x").hist(bin_count=4).alias("h")).height == 4


def test_by_with_categorical_keys_keeps_their_dtype_lazily() -> None:
    df = pl.DataFrame({"x": [0.1, 0.9, 0.5], "g": pl.Series(["b", "a", "b"], dtype=pl.Categorical)})
    out = df.lazy().select(pl.col("x").gpu_hist.histogram(2, range=(0, 1), by="g")).collect()
    key = out.unnest("x")["g"]
    assert key.dtype == pl.Categorical
    assert key.to_list() == ["b", "b", "a", "a"]


def test_by_on_a_float_key_is_refused() -> None:
    df = pl.DataFrame({"x": [0.1], "g": [1.5]})
    with pytest.raises(pl.exceptions.PolarsError, match="round or cast"):
        df.select(pl.col("x").gpu_hist.histogram(2, range=(0, 1), by="g"))
