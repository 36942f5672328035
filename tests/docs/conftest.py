"""The docs tests (scripts/test.sh, "docs site"): the guide's code runs, the
site builds strictly, a browser renders it. The Markdown runner is shared
with the Python suite (tests/python/mdcode.py)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
