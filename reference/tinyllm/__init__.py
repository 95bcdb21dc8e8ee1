"""tinyllm: the course's small numpy deep-learning library.

Only numpy is needed to import it: the sandbox mounts this package read-only next to numpy and
pytest and nothing else. Subpackages are imported explicitly (``tinyllm.autograd.tensor``,
``tinyllm.nn``, ...), so importing ``tinyllm`` itself is cheap.
"""
