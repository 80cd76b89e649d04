"""The mergeable ``Histogram``: binning, fills, statistics, the UHI protocol and
scikit-hep interop."""
