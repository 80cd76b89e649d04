"""Histograms of files and lazy queries larger than memory, read in bounded batches."""
