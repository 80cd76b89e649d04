"""The native module: the expression plugin, and the GPU entry points the package wraps."""

__version__: str

def gpu_available() -> bool: ...
def gpu_info() -> str: ...
def explain(
    dtype: str, rows: int, pickled_options: bytes, weighted: bool, on_device: bool
) -> str: ...
def histogram_cuda(
    name: str,
    ptr: int,
    len: int,
    typestr: str,
    pickled_options: bytes,
    weights_ptr: int | None = None,
) -> tuple[object, str, float]: ...
def histogramdd_cuda(
    names: list[str],
    ptrs: list[int],
    strides: list[int],
    len: int,
    typestr: str,
    pickled_options: bytes,
    weights_ptr: int | None = None,
) -> tuple[object, str, float]: ...
