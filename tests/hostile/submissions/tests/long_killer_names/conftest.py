"""Crashes the grader: the fast zygote (the student's once this conftest runs there) announces
test ids of raw UTF-8 (4 bytes an emoji) and answers each run as failed by one of them. The
driver re-encodes every killer id in each later request's "order" with json's ensure_ascii
(a surrogate pair, 12 bytes an emoji), so the request outgrows MAX_HEADER_BYTES and encode_frame raises
ProtocolError on the trusted side, which no caller catches."""
import json
import struct
import sys

srv = sys.modules.get("_warm_runner.server")
proto = sys.modules.get("_warm_runner.protocol")
if srv is not None and proto is not None and not getattr(srv, "_patched_by_suite", False):
    srv._patched_by_suite = True
    IDS = [f"test_x.py::t{i}[" + "\U0001F600" * 7500 + "]" for i in range(16)]  # 30 KB raw (an answer fits a pipe), 90 KB escaped

    def encode_frame(header, blobs=()):
        body = json.dumps({**header, "blobs": [len(b) for b in blobs]}, separators=(",", ":"),
                          ensure_ascii=False).encode()
        return b"".join([struct.pack(">I", len(body)), body, *(bytes(b) for b in blobs)])

    srv.encode_frame = encode_frame
    original_serve = srv.Zygote.serve

    def serve(self, collected, errors):
        return original_serve(self, IDS if collected else collected, errors)

    srv.Zygote.serve = serve
    original_respond = srv.respond
    answered = [0]

    def respond(run, *args):
        header, blobs = original_respond(run, *args)
        if header.get("kind") == "suite":
            answered[0] += 1
            if answered[0] > 1:  # the reference's first run passes, as it must
                header = {**header, "outcome": "failed", "node": IDS[answered[0] % len(IDS)]}
                blobs = []
        return header, blobs

    srv.respond = respond
