"""The generated mutant pool: build it with mutmut's operators, curate it, freeze it, verify it.

Phases of ``build`` (an instructor/maintainer tool, run when the reference changes):

1. generate: mutmut 3.8.1's own node operators, used as a library, enumerate every mutant of the
   reference ``luong.py``. mutmut would merge them behind trampolines; here each one becomes a
   full-file variant (the module with exactly one mutation) frozen as a unified diff. mutmut reads
   its configuration from the working directory and writes a ``mutants/`` folder of its own, so it
   runs in a private temporary directory, never in the repository.
2. sanity: the reference must pass the course tests and the oracle suite, which also times them.
3. curate: each candidate runs both suites in its own subprocess (fresh module state), with a
   timeout derived from the reference's time; a timeout counts as killed.
4. classify survivors: a change inside a ``raise``'s arguments is "message-only"; any other
   survivor needs a hand-written reason, carried over by id from the previous ``dropped.json``
   (edit that file to classify a new survivor). Unclassified survivors stop the build.
5. freeze: ``pool/<id>.patch``, ``pool.json`` (with a content-hash version) and ``dropped.json``.

Ids hash the enclosing function, the operator and the changed text, never a position, so they
survive edits elsewhere in the reference. ``verify`` is what the grader calls before grading.
"""

from grader.pool.curate import build, run_suites
from grader.pool.generate import Candidate, generate
from grader.pool.store import (
    BOTH,
    COURSE,
    GENERATOR,
    ORACLE,
    Pool,
    PoolError,
    PoolMutant,
    apply_pool,
    load_pool,
    pool_version,
    verify_pool,
)

__all__ = ["BOTH", "COURSE", "GENERATOR", "ORACLE", "Candidate", "Pool", "PoolError", "PoolMutant", "apply_pool", "build",
           "generate", "load_pool", "pool_version", "run_suites", "verify_pool"]
