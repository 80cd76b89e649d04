"""Where pickles written by polars-gpu-hist 0.1 find their classes (``polars_gpu_hist._accumulator``
was the Histogram's module then); histograms pickled since name ``polars_gpu_hist.Histogram``."""

from polars_gpu_hist._histogram.histogram import Flow, Histogram

__all__ = ["Flow", "Histogram"]
