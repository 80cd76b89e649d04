"""``python -m polars_gpu_hist``: the command line (``_cli``)."""

import sys

from polars_gpu_hist._cli.main import main

if __name__ == "__main__":
    sys.exit(main())
