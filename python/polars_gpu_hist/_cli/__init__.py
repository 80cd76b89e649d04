"""The command line: ``python -m polars_gpu_hist`` and ``polars-gpu-hist``."""
