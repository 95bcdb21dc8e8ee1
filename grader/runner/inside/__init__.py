"""Code that runs inside the sandbox: the zygote and its children.

Only this folder is mounted into a sandbox (read-only, at /runner), never the grader package,
so nothing here may import ``grader``: standard library, numpy and pytest only, and sibling
modules by relative import. ``protocol`` and ``outcomes`` are also imported by the trusted
driver, so those two import nothing but the standard library.
"""
