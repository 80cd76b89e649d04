"""Histograms as expressions and as functions of Series and arrays; the drop-in for
Polars' ``hist``."""
