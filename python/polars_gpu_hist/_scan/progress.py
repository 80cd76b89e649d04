"""A scan's progress: rows read, bytes a second, and the time left where the total is known,
as one line redrawn in place on a terminal (or any text stream), or as one display that a
notebook updates in place. ``progress="auto"`` shows it in a notebook, and on a terminal for
scans that last more than half a second."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, TextIO, Union

ProgressArg = Union[bool, TextIO, Literal["auto"]]

# Redraws at most this often; "auto" shows nothing for scans shorter than the delay.
_EVERY = 0.1
_AUTO_DELAY = 0.5


def check(progress: object) -> None:
    """``progress`` as :func:`histogram_scan` takes it, checked before anything is read."""
    writes = callable(getattr(progress, "write", None))
    if not (isinstance(progress, bool) or progress == "auto" or writes):
        raise TypeError(
            "`progress` must be True, False, 'auto' or a text stream (with .write), got "
            f"{progress!r}"
        )


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (where stderr is no terminal, and a display can
    be updated in place)."""
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    kernel = get() if callable(get) else None
    return kernel is not None and "IPKernelApp" in getattr(kernel, "config", {})


class Progress:
    """A progress line for ``total`` rows (None: unknown), drawn from the first update or
    once ``delay`` seconds have passed; ``file_bytes``, the size of the files read, gives the
    rate in bytes (else ``row_bytes``, the decoded bytes of a row)."""

    def __init__(
        self,
        label: str,
        total: int | None,
        *,
        file_bytes: int | None = None,
        row_bytes: int = 0,
        stream: TextIO | None = None,
        delay: float = 0.0,
        notebook: bool = False,
    ) -> None:
        self.label, self.total, self.delay = label, total, delay
        self.file_bytes, self.row_bytes = file_bytes, row_bytes
        self.stream = stream if stream is not None else sys.stderr
        self.rows = 0
        self.start = time.perf_counter()
        self.drawn_at = 0.0
        self._display: Any = None
        self._notebook = notebook

    def update(self, rows: int, absolute: bool = False) -> None:
        """``rows`` more rows read (or, ``absolute``, the rows read so far)."""
        self.rows = rows if absolute else self.rows + rows
        now = time.perf_counter()
        if now - self.start >= self.delay and now - self.drawn_at >= _EVERY:
            self.drawn_at = now
            self._draw(now)

    def text(self, now: float) -> str:
        """The line: rows (of the total), bytes a second, the time left."""
        elapsed = max(now - self.start, 1e-9)
        rate = self.rows / elapsed
        parts = []
        if self.total:
            done = min(self.rows / self.total, 1.0)
            bar = "#" * int(30 * done)
            parts.append(f"[{bar:<30}] {done:6.1%} {self.rows:,}/{self.total:,} rows")
        else:
            parts.append(f"{self.rows:,} rows")
        read = self._bytes_read()
        if read is not None:
            parts.append(f"{_size(read / elapsed)}/s")
        parts.append(f"{rate / 1e6:.1f} M rows/s")
        if self.total and 0 < self.rows < self.total and rate > 0:
            parts.append(f"{_duration((self.total - self.rows) / rate)} left")
        return f"{self.label}: " + ", ".join(parts)

    def _bytes_read(self) -> float | None:
        if self.file_bytes and self.total:
            return self.file_bytes * min(self.rows / self.total, 1.0)
        if self.row_bytes:
            return float(self.rows * self.row_bytes)
        return None

    def _draw(self, now: float) -> None:
        text = self.text(now)
        if self._notebook:
            self._show(text)
            return
        self.stream.write(f"\r{text}")
        self.stream.flush()

    def _show(self, text: str) -> None:
        """One display, updated in place (a new output per redraw would fill the cell)."""
        from IPython.display import display

        if self._display is None:
            self._display = display(_Line(text), display_id=True)
        else:
            self._display.update(_Line(text))

    def close(self) -> None:
        """The last line (a line of its own ends a terminal's; an error then starts below)."""
        if self.drawn_at or not self.delay:
            self._draw(time.perf_counter())
            if not self._notebook:
                self.stream.write("\n")
                self.stream.flush()


class _Line:
    """A progress line as a notebook shows it (text, monospaced in HTML)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        import html

        return f"<pre style='margin:0'>{html.escape(self.text)}</pre>"


def make(
    progress: ProgressArg,
    label: str,
    total: Callable[[], int | None],
    *,
    file_bytes: int | None = None,
    row_bytes: int = 0,
) -> Progress | None:
    """The progress ``progress`` asks for (None: none); ``total`` is called only then (it may
    read the files' metadata)."""
    if not progress:
        return None
    notebook = False
    if progress == "auto":
        notebook = in_notebook()
        if not notebook and not sys.stderr.isatty():
            return None
    stream = None if isinstance(progress, (bool, str)) else progress
    delay = _AUTO_DELAY if progress == "auto" else 0.0
    return Progress(
        label,
        total(),
        file_bytes=file_bytes,
        row_bytes=row_bytes,
        stream=stream,
        delay=delay,
        notebook=notebook,
    )


@contextmanager
def polled(bar: Progress | None, rows: Callable[[], int]) -> Iterator[None]:
    """Redraws ``bar`` from ``rows()`` (the rows read so far) while the body runs: a query
    that Polars runs without returning to Python in between. The line ends with the body."""
    if bar is None:
        yield
        return
    done = threading.Event()

    def poll() -> None:
        while not done.wait(_EVERY):
            bar.update(rows(), absolute=True)

    thread = threading.Thread(target=poll, name="polars-gpu-hist-progress", daemon=True)
    thread.start()
    try:
        yield
        bar.update(rows(), absolute=True)
    finally:
        done.set()
        thread.join()
        bar.close()


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, s = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {s:02d} s"
    hours, m = divmod(minutes, 60)
    return f"{hours} h {m:02d} min"
