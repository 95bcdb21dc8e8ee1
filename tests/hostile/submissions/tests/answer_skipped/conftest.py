"""Runs in the fast zygote: every killed run (the forced failure at least) is answered "skipped",
an outcome of single course tests only, which no answer for a whole run may carry (red team,
round 9: the grade died with a KeyError, taking the implementation's verdict with it)."""
import sys

for name, module in list(sys.modules.items()):
    if name.endswith(".server") and getattr(module, "Zygote", None) is not None:
        def respond(run, *args, original=module.respond, **kwargs):
            header, blobs = original(run, *args, **kwargs)
            if header.get("outcome") in ("failed", "error"):
                header["outcome"] = "skipped"
            return header, blobs

        module.respond = respond
