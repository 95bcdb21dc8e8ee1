import os as _os
import sys as _sys

_CHUNK = b"flood! " * 16384
for _ in range(1000):  # about 110 MB on each of fd 1 and fd 2
    _os.write(1, _CHUNK)
    _os.write(2, _CHUNK)
print("flood " * 1_000_000, file=_sys.stdout)
