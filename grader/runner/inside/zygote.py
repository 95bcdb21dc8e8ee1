"""Entry point inside the sandbox: ``python /runner/zygote.py``.

Loads this folder as a private package (``_warm_runner``) instead of putting it on sys.path, so
a student's helper module named like one of ours (``protocol``, ``loader``) cannot collide with
it, and the tests cannot simply ``import`` the runner's modules by name.
"""

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    del sys.path[0]
spec = importlib.util.spec_from_file_location("_warm_runner", HERE / "__init__.py",
                                              submodule_search_locations=[str(HERE)])
if spec is None or spec.loader is None:
    raise ImportError(f"cannot load the runner package from {HERE}")
package = importlib.util.module_from_spec(spec)
sys.modules["_warm_runner"] = package
spec.loader.exec_module(package)
importlib.import_module("_warm_runner.server").main()
