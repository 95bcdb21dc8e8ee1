"""The environment every sandbox gets, whichever backend starts it."""

from __future__ import annotations

from collections.abc import Mapping

# IMPORTANT: keep in sync with the ENV line of docker/sandbox/Dockerfile and SANDBOX_ENV_TARGET.
SANDBOX_ENV_TARGET = "/opt/sandbox-env"  # the numpy+pytest venv, read-only inside
SANDBOX_PYTHON = f"{SANDBOX_ENV_TARGET}/bin/python"
SCRATCH = "/scratch"
# What /proc says of the whole machine rather than of the sandbox: memory, page-cache and slab
# sizes, CPU, I/O, interrupt and scheduler counters, file locks, kernel settings. A run could write
# into them (allocate, cache, spin) and a later run or the other sandbox read them back, so both
# backends hide them: an empty file, an empty folder.
MACHINE_WIDE_PROC = ("meminfo", "vmstat", "stat", "loadavg", "diskstats", "interrupts", "softirqs", "schedstat",
                     "zoneinfo", "buddyinfo", "pagetypeinfo", "slabinfo", "swaps", "vmallocinfo", "locks",
                     "key-users", "partitions", "uptime",
                     "sys", "pressure", "sysvipc", "fs", "irq", "driver", "bus", "tty")
FIXED_ENV = {
    "PATH": f"{SANDBOX_ENV_TARGET}/bin:/usr/local/bin:/usr/bin:/bin",
    "HOME": SCRATCH,
    "TMPDIR": SCRATCH,
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
}


def sandbox_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    """The caller's variables plus FIXED_ENV; a caller may not redefine a fixed one."""
    env = dict(extra or {})
    for key, value in env.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"sandbox environment entries must be str, got {key!r}={value!r}")
        if not key or "=" in key or "\0" in key or "\0" in value:
            raise ValueError(f"invalid sandbox environment variable {key!r}")
        if key in FIXED_ENV and value != FIXED_ENV[key]:
            raise ValueError(f"{key} is fixed inside the sandbox ({FIXED_ENV[key]!r}); do not pass it")
    env.update(FIXED_ENV)
    return env
