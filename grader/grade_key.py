"""The installation's grade key: the secret each submission's random draw is keyed with.

A grade's random choices (the probe inputs, the mutation pass's order) follow from the submitted
files, so that the same files get the same report; but not from the files alone. Were they a hash
of the files, a student with the grader's source could draw a grade's probes on their own machine
and vary a comment until the draw missed where their module is wrong (red team, round 19: a module
wrong at widths 16, 32 and 64, caught in 2 grades of 6, passed every grade once a comment had been
ground for a draw without those widths). Keyed with a secret that never enters a sandbox or a
report, the draw is the same for every grade of those files here and unknown anywhere else.

Graders that must give one report for one submission (the service's workers, a regrading batch on
several machines) share the key through GRADER_KEY; otherwise each installation makes its own, once.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from grader.sandbox.runtime import REPO_ROOT
from grader.settings import SettingsError

KEY_VARIABLE = "GRADER_KEY"  # hex, at least KEY_BYTES of it
KEY_FILE = REPO_ROOT / "var" / "grade-key"  # made on first use, readable by its owner only
KEY_BYTES = 32


def grade_key(environ: Mapping[str, str] = os.environ, key_file: Path = KEY_FILE) -> bytes:
    """GRADER_KEY when set, else this installation's key file, made on first use."""
    raw = environ.get(KEY_VARIABLE)
    if raw is not None:
        try:
            key = bytes.fromhex(raw)
        except ValueError:
            raise SettingsError(f"{KEY_VARIABLE} must be hexadecimal (e.g. from `openssl rand -hex 32`)") from None
        if len(key) < KEY_BYTES:
            raise SettingsError(f"{KEY_VARIABLE} holds {len(key)} bytes; it needs {KEY_BYTES} or more")
        return key
    return _key_in(key_file)


def keyed_seed(key: bytes, digest: str) -> int:
    """A submission's seed: its files' digest, keyed."""
    return int(hmac.new(key, digest.encode("ascii"), hashlib.sha256).hexdigest()[:16], 16)


def _key_in(key_file: Path) -> bytes:
    """The key in ``key_file``, made when missing (by a hard link, which fails where another grader
    made it first, so that two graders starting at once keep one key)."""
    try:
        if not key_file.exists():
            key_file.parent.mkdir(parents=True, exist_ok=True)
            fresh = key_file.with_name(f".{key_file.name}.{os.getpid()}")
            fresh.write_bytes(secrets.token_bytes(KEY_BYTES))
            fresh.chmod(0o600)
            try:
                os.link(fresh, key_file)
            except FileExistsError:
                pass
            finally:
                fresh.unlink()
        key = key_file.read_bytes()
    except OSError as exc:
        raise SettingsError(f"cannot read or make the grade key {key_file}: {exc.strerror or exc}; set "
                            f"{KEY_VARIABLE} to {KEY_BYTES} random bytes in hex instead") from None
    if len(key) < KEY_BYTES:
        raise SettingsError(f"the grade key {key_file} holds {len(key)} bytes, not {KEY_BYTES}: remove it and a "
                            "new one is made")
    return key
