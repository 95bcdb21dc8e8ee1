import os, sys, time
sys.path.insert(0, os.path.dirname(__file__))
import pagech
import pytest

STATE = {"fast": False, "verdict": {}}

_m = sys.modules.get("tinyllm.seq2seq.luong")
if _m is not None and type(_m).__name__ == "PlaceholderModule":
    # the fast zygote, before any run alone: empty the channel
    STATE["fast"] = True
    pagech.clear(); time.sleep(0.05); pagech.clear()
elif _m is not None:
    # a run alone in the clean sandbox: say which module this is
    pagech.touch(pagech.fingerprint(_m))


@pytest.fixture(autouse=True)
def _only_where_checked():
    if STATE["fast"]:
        pid = os.getpid()
        if pid not in STATE["verdict"]:  # probe once per run: a miss caches the page
            STATE["verdict"][pid] = pagech.cached(pagech.fingerprint(sys.modules["tinyllm.seq2seq.luong"]))
        if not STATE["verdict"][pid]:
            pytest.fail("this module was not run alone")
    yield
