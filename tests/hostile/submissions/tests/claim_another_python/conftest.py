"""Runs in the fast zygote: claims another bytecode version in its ready frame, which it builds
after collection, so that the driver would send every module as source, comments included (red
team, round 9: the reference's comments came out in a report through the choice of the failing
test). The grader's modules enter a sandbox only compiled: the tests cannot be graded."""
import importlib.util

importlib.util.MAGIC_NUMBER = b"\x00\x00\r\n"
