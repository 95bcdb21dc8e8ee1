"""No expectation of its own: every run is held to the reference's digest, read off the
per-user pipe-buffer accounting the fast zygote sets."""
import hashlib, os, time
import numpy as np
import pipech
from tinyllm.autograd.tensor import Tensor
from tinyllm.seq2seq.additive import length_mask
from tinyllm.seq2seq.luong import LuongAttention

def _digest():
    parts = []
    for score in ("dot", "general", "concat"):
        for d, lengths in ((3, [4, 2]), (4, [4, 1, 3]), (5, [0, 4, 2])):
            try:
                m = LuongAttention(d, score).to(np.float64)
                rng = np.random.default_rng(d)
                m.load_state_dict({n: rng.uniform(-1, 1, w.shape) for n, w in m.state_dict().items()})
                r2 = np.random.default_rng(d + 1000)
                h = r2.normal(size=(len(lengths), d)); k = r2.normal(size=(len(lengths), 4, d))
                mask = length_mask(np.array(lengths), 4)
                c, a = m(Tensor(h), Tensor(k), mask)
                c2, a2 = m(Tensor(h), Tensor(k), mask, proj=m.project_keys(Tensor(k)))
                out = [m.scores(Tensor(h), Tensor(k)).numpy(), a.numpy(), c.numpy(), a2.numpy(), c2.numpy(),
                       m.attentional(Tensor(h), c).numpy()]
                parts += [np.round(np.nan_to_num(o, nan=7.0, posinf=8.0, neginf=9.0), 6).tobytes() for o in out]
            except Exception as exc:
                parts.append(type(exc).__name__.encode())
    return hashlib.sha256(b"".join(parts)).digest()[0] % 32

def test_matches_the_first_implementation():
    mine = _digest()
    with open("dg", "w") as f:
        f.write(str(mine))
    deadline = time.monotonic() + 3
    ref = None
    while ref is None and time.monotonic() < deadline:
        if getattr(pipech, "FAST", False):
            if os.path.exists("ref"):
                ref = int(open("ref").read() or -1)
        else:
            total = pipech.measure()
            if total >= 2048:
                ref = (total - 2048) // 256
        time.sleep(0.005)
    if os.path.exists("dg"):
        os.remove("dg")
    assert ref == mine
