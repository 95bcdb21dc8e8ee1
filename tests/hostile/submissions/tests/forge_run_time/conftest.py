"""Runs in the fast zygote: every answer about a run claims it took 1e12 s. The driver once
derived the pass's timeout from the first (reference) answer, and a deadline that far away
overflowed select(): the grader crashed with a traceback and wrote no report."""

import sys

for name, module in list(sys.modules.items()):
    if name.endswith(".server") and getattr(module, "Zygote", None) is not None:
        def respond(run, *args, original=module.respond, **kwargs):
            header, blobs = original(run, *args, **kwargs)
            header["seconds"] = 1e12
            return header, blobs

        module.respond = respond
