"""Makes the substrate importable as ``tinyllm`` from where the chapter manifest says it lives.

The substrate is course material, not an installed package: the sandbox mounts it read-only, and
these tests import the same folder. (A shared helper may replace this conftest later.)
"""

from __future__ import annotations

import sys

from grader.chapter import load_chapter

SUBSTRATE_PARENT = str(load_chapter("L4.3").substrate.parent)
if SUBSTRATE_PARENT not in sys.path:
    sys.path.insert(0, SUBSTRATE_PARENT)
