"""Where a scan's rows come from: the first stop of the pipeline (source -> plan -> reader ->
fill -> result). A :class:`Dataset` is the source as given (a LazyFrame or DataFrame, a path,
a glob, a directory, a list of them, a URL), resolved once: its format, its files where they
are local, its hive partitions, the scanner's options, the rows kept (``where``). Every pass
of the scan opens it afresh (:meth:`Dataset.lazy`)."""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import polars as pl

from polars_gpu_hist._scan.csv import CSV_DEFAULTS

Source = Union[pl.LazyFrame, pl.DataFrame, str, Path, Sequence[Union[str, Path]]]

# File formats by suffix, and Polars' scanner of each.
FORMATS: dict[str, str] = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "csv",
    ".ipc": "ipc",
    ".arrow": "ipc",
    ".feather": "ipc",
}
SCANNERS: dict[str, Callable[..., pl.LazyFrame]] = {
    "parquet": pl.scan_parquet,
    "csv": pl.scan_csv,
    "ipc": pl.scan_ipc,
}
# Formats whose row count Polars reads from their metadata (a progress bar's total).
COUNTED = ("parquet", "ipc")
# Files a directory holds beside its data, which a scan of it leaves out (Spark, Hive, Dask).
_NOT_DATA_PREFIXES = (".", "_")


def is_csv(source: object) -> bool:
    """Whether ``source`` names CSV (or TSV) files."""
    try:
        paths = _paths(source)
    except (TypeError, ValueError):
        return False
    suffixes = {_suffix(p) for p in paths}
    return suffixes <= {".csv", ".tsv"} and bool(suffixes)


@dataclass
class Dataset:
    """A scan's rows: a frame, or files of one format (see the module's header)."""

    source: Source
    # How to open it: a fresh LazyFrame, before ``where``.
    opener: Callable[[], pl.LazyFrame]
    # "parquet", "csv" or "ipc" for files; None for a LazyFrame or DataFrame.
    format: str | None = None
    # The local files the paths name (globs and directories resolved); empty for URLs.
    files: list[str] = field(default_factory=list)
    # The hive partition keys of a partitioned directory (`dir/key=value/...`).
    partitions: list[str] = field(default_factory=list)
    # Options given to Polars' scanner (besides the defaults).
    reader_options: Mapping[str, Any] | None = None
    where: pl.Expr | None = None
    storage_options: Mapping[str, Any] | None = None
    # A CSV column its first rows leave as String is inferred again from the whole file.
    infer_whole: bool = False

    def lazy(self) -> pl.LazyFrame:
        """The rows kept, as a fresh scan: Polars keeps a scan's file list and Parquet
        metadata, which a file rewritten since no longer matches."""
        lf = _storage_of_extensions(self.opener())
        return lf if self.where is None else lf.filter(self.where)

    @property
    def label(self) -> str:
        """The source as an error message or progress bar names it."""
        return label(self.source)

    @property
    def file_bytes(self) -> int | None:
        """The size of the files on disk, where they are all local (a rate's bytes)."""
        if not self.files:
            return None
        try:
            return sum(os.path.getsize(f) for f in self.files)
        except OSError:
            return None

    def total_rows(self) -> int | None:
        """The rows the scan reads where the files' metadata has their number (Parquet, IPC,
        no ``where``); ``None`` otherwise."""
        if self.format not in COUNTED or self.where is not None:
            return None
        try:
            return int(self.opener().select(pl.len()).collect().item())
        except pl.exceptions.PolarsError:
            return None


def _storage_of_extensions(lf: pl.LazyFrame) -> pl.LazyFrame:
    """`lf` with each Arrow extension column (awkward's, a user's own ``pa.ExtensionType``)
    read as its storage, as ``histogram`` and ``Histogram.fill`` take one; a column's
    extension metadata says nothing a histogram could use."""
    extension = getattr(pl, "BaseExtension", None)  # Polars 2; none in older releases
    if extension is None:
        return lf
    schema = lf.collect_schema()
    columns = [c for c, dtype in schema.items() if isinstance(dtype, extension)]
    return lf.with_columns(pl.col(c).ext.storage() for c in columns) if columns else lf


def open_dataset(
    source: Source,
    reader_options: Mapping[str, Any] | None = None,
    where: pl.Expr | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> Dataset:
    """The dataset ``source`` names, checked (the files exist, one format, options that
    Polars' scanner takes), before anything is read."""
    if isinstance(source, (pl.LazyFrame, pl.DataFrame)):
        if reader_options or storage_options:
            raise ValueError(
                "`reader_options` and `storage_options` are for files: a LazyFrame or DataFrame "
                "is already read"
            )
        frame = source.lazy()
        return Dataset(source, lambda: frame, where=where)
    if reader_options is not None and not isinstance(reader_options, Mapping):
        raise TypeError(
            "`reader_options` must be a dict of Polars' scan_csv/scan_parquet/scan_ipc options, "
            f"got {type(reader_options).__name__}"
        )
    if storage_options is not None and not isinstance(storage_options, Mapping):
        raise TypeError(
            "`storage_options` must be a dict of options for the storage (credentials, region), "
            f"got {type(storage_options).__name__}"
        )
    paths = _paths(source)
    _format(paths, [])  # the suffixes first: a file of no format we read is named as such
    files, literal, partitions = _resolve(paths)
    fmt = _format(paths, files)
    options: dict[str, Any] = {} if not literal else {"glob": False}
    if fmt == "csv":
        options.update(CSV_DEFAULTS)
        if any(_suffix(p) == ".tsv" for p in paths):
            options["separator"] = "\t"
    elif partitions:
        options["hive_partitioning"] = True
    if storage_options:
        options["storage_options"] = dict(storage_options)
    options.update(reader_options or {})
    scanner = SCANNERS[fmt]
    if fmt == "csv" and partitions:
        opener = _hive_csv(files, partitions, options, where)
    else:
        target: Any = paths if len(paths) > 1 else paths[0]

        def opener() -> pl.LazyFrame:
            return scanner(target, **options)

    try:
        opener()
    except TypeError as e:
        raise TypeError(f"`reader_options`: {e}") from None
    return Dataset(source, opener, fmt, files, partitions, reader_options, where, storage_options)


def _paths(source: object) -> list[str]:
    """The paths of a path, glob or sequence of them; ``TypeError`` for anything else."""
    accepted = (
        "`source` must be a LazyFrame, a DataFrame, a path, glob or directory (str or "
        "pathlib.Path) of Parquet/CSV/IPC files, or a list of paths"
    )
    if isinstance(source, (str, os.PathLike)):
        items: list[object] = [source]
    elif isinstance(source, Iterable) and not isinstance(source, (bytes, bytearray, Mapping)):
        items = list(source)
        if not items:
            raise ValueError("`source` is an empty list: give at least one path")
    else:
        raise TypeError(f"{accepted}; got {type(source).__name__}")
    paths = []
    for item in items:
        path = os.fspath(item) if isinstance(item, (str, os.PathLike)) else None
        if not isinstance(path, str):
            raise TypeError(f"{accepted}; got a {type(source).__name__} holding {item!r}")
        paths.append(path)
    return paths


def _is_url(path: str) -> bool:
    return "://" in path


def _suffix(path: str) -> str:
    return Path(path.split("?")[0] if _is_url(path) else path).suffix.lower()


def _resolve(paths: list[str]) -> tuple[list[str], bool, list[str]]:
    """The local files the paths name (directories and globs expanded, in order), whether every
    path is a file as written (even one with ``*?[`` in its name), and the hive keys of
    partitioned directories."""
    files: list[str] = []
    literal = True
    partitions: list[str] = []
    for p in paths:
        if _is_url(p):
            literal = False  # cloud storage: Polars finds (or misses) it
            continue
        local = os.path.expanduser(p)
        if Path(local).is_dir():
            literal = False
            found = _data_files(Path(local))
            if not found:
                raise FileNotFoundError(f"no Parquet/CSV/IPC file in the directory {p}")
            files.extend(found)
            for key in _hive_keys(Path(local), found):
                if key not in partitions:
                    partitions.append(key)
            continue
        if Path(local).exists():
            files.append(local)
            continue
        literal = False
        if any(c in p for c in "*?["):
            matched = sorted(glob.glob(local, recursive=True))
            if not matched:
                raise FileNotFoundError(f"no file matches {p}")
            files.extend(matched)
        else:
            raise FileNotFoundError(f"no such file: {p}")
    return files, literal, partitions


def _data_files(directory: Path) -> list[str]:
    """The data files under a directory, in path order, leaving out hidden and marker files
    (``_SUCCESS``, ``.crc``) and their folders."""
    found = []
    for root, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith(_NOT_DATA_PREFIXES))
        for name in sorted(names):
            if not name.startswith(_NOT_DATA_PREFIXES) and _suffix(name) in FORMATS:
                found.append(os.path.join(root, name))
    return found


def _hive_keys(directory: Path, files: list[str]) -> list[str]:
    """The partition keys of ``dir/key=value/...`` paths, in order of depth."""
    keys: list[str] = []
    for f in files:
        for part in Path(f).relative_to(directory).parts[:-1]:
            key = part.split("=", 1)[0] if "=" in part else None
            if key and key not in keys:
                keys.append(key)
    return keys


def _format(paths: list[str], files: list[str]) -> str:
    """The one format of the paths (directories by the files they hold)."""
    named = [p for p in paths if _is_url(p) or not Path(os.path.expanduser(p)).is_dir()]
    suffixes = {_suffix(p) for p in named} | {_suffix(f) for f in files}
    formats = {FORMATS.get(s) for s in suffixes}
    if not suffixes and not files:
        return ""  # only directories, not yet listed
    if len(formats) != 1 or None in formats:
        names = ", ".join(sorted(FORMATS))
        kinds = ", ".join(sorted(s or "(no suffix)" for s in suffixes))
        raise ValueError(
            f"cannot read {', '.join(paths)}: use files of one format, ending in {names} "
            f"(found {kinds})"
        )
    fmt = formats.pop()
    assert fmt is not None
    return fmt


def _hive_csv(
    files: list[str], keys: list[str], options: dict[str, Any], where: pl.Expr | None
) -> Callable[[], pl.LazyFrame]:
    """A hive-partitioned directory of CSV files, which Polars' CSV scanner does not partition:
    one scan per file with its partition values as columns (strings, as the paths spell them),
    the files whose values fail a ``where`` on the partition keys alone left out unread."""
    values = [_partition_values(f, keys) for f in files]
    kept = list(range(len(files)))
    if where is not None and set(where.meta.root_names()) <= set(keys):
        table = pl.DataFrame(
            {k: [v[k] for v in values] for k in keys}, schema=dict.fromkeys(keys, pl.String)
        )
        mask = table.select(where.fill_null(False)).to_series()
        kept = [i for i in kept if mask[i]]

    def opener() -> pl.LazyFrame:
        scans = [
            pl.scan_csv(files[i], **options).with_columns(
                pl.lit(values[i][k], pl.String).alias(k) for k in keys
            )
            for i in kept
        ]
        if not scans:  # every file pruned: the schema of the first, no rows
            return (
                pl.scan_csv(files[0], **options)
                .with_columns(pl.lit(None, pl.String).alias(k) for k in keys)
                .head(0)
            )
        return pl.concat(scans, how="diagonal_relaxed")

    return opener


def _partition_values(path: str, keys: list[str]) -> dict[str, str | None]:
    found: dict[str, str | None] = dict.fromkeys(keys)
    for part in Path(path).parts[:-1]:
        if "=" in part:
            key, value = part.split("=", 1)
            if key in found:
                found[key] = None if value == "__HIVE_DEFAULT_PARTITION__" else value
    return found


def label(source: Source) -> str:
    """The source as an error message or progress bar names it."""
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    if isinstance(source, (pl.LazyFrame, pl.DataFrame)):
        return f"the {type(source).__name__}"
    paths = [str(p) for p in source]
    return paths[0] if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1} more files"


def scan_source(source: Source, reader_options: Mapping[str, Any] | None = None) -> pl.LazyFrame:
    """A LazyFrame over a LazyFrame, a path, glob or directory (Parquet, CSV, IPC), or a list
    of paths; ``reader_options`` go to Polars' scanner (CSV files get their defaults below)."""
    return open_dataset(source, reader_options).lazy()
