"""python -m hurray: the `hurray` command (docs/reference/cli.md)."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
