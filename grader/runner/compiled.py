"""Trusted modules shipped to the sandbox as compiled code.

A run's child used to compile its module from source: about 1.5 ms of a 14 ms run, paid again
for every mutant. The grader's own modules (reference, variants, mutants) are compiled here, on
the trusted side, and the child only unmarshals. A grade compiles its own disguised set once
(grader/disguise.py: the code must differ from grade to grade); a runner given undisguised
modules, as the runner's tests and the benchmark do, uses a cache on disk keyed by the Python
bytecode version, the module's file name and every source. The student's own module is never
compiled here (compiling untrusted source belongs in the sandbox) and always travels as source.
It also means the reference's source text never enters the sandbox, only its code; and the code
is compiled with optimize=2 (OPTIMIZE), so it carries no docstring either (a test that read them
could pass their text out through the choice of the test that fails, which the report shows).
That also drops ``assert`` statements: a chapter's reference, variants and mutants must not rely
on them (tests/unit/test_compiled.py checks).
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from grader.sandbox.runtime import REPO_ROOT

CACHE_DIR_VARIABLE = "GRADER_CACHE_DIR"
MAGIC = importlib.util.MAGIC_NUMBER  # bytecode version: the sandbox's Python must report the same
OPTIMIZE = 2  # no docstrings (nor asserts) in the code a sandbox gets


def cache_dir() -> Path:
    """$GRADER_CACHE_DIR or <repo>/var/cache."""
    return Path(os.environ.get(CACHE_DIR_VARIABLE, REPO_ROOT / "var" / "cache"))


def compiled_modules(sources: Iterable[bytes], filename: str, *, folder: Path | None = None) -> dict[bytes, bytes]:
    """Each source -> its marshalled code object (compiled as ``filename``), from the cache when
    it holds this exact set; a missing, unreadable or stale cache is rebuilt, an unwritable one
    skipped."""
    unique = sorted(set(sources))
    digests = b"".join(hashlib.sha256(source).digest() for source in unique)
    key = hashlib.sha256(MAGIC + bytes([OPTIMIZE]) + filename.encode() + digests)
    path = (folder or cache_dir()) / "compiled" / f"{key.hexdigest()[:32]}.marshal"
    try:
        cached = marshal.loads(path.read_bytes())
        if isinstance(cached, list) and len(cached) == len(unique) and all(isinstance(c, bytes) for c in cached):
            return dict(zip(unique, cached))
    except (OSError, EOFError, ValueError, TypeError):
        pass
    compiled = compile_modules(unique, filename)
    _write_atomically(path, marshal.dumps([compiled[source] for source in unique]))
    return compiled


def compile_modules(sources: Iterable[bytes], filename: str) -> dict[bytes, bytes]:
    """Each source -> its marshalled code object, compiled as ``filename``."""
    return {source: marshal.dumps(compile(source, filename, "exec", dont_inherit=True, optimize=OPTIMIZE))
            for source in sources}


def _write_atomically(path: Path, data: bytes) -> None:
    """Write-then-rename, so a concurrent grade reads the old file or the new one, never half."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".compiled-")
    except OSError:
        return  # a read-only checkout grades as well, compiling each time
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
