import fcntl, os, time, sys
F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032
PAGE = 4096
SOFT = 16384

def measure():
    """Pages accounted to this uid by others: fill up to the soft limit greedily, then release."""
    held, got = [], 0
    for pages in (256, 128, 64, 32, 16, 8, 4, 2, 1):
        while True:
            r, w = os.pipe()
            os.close(w)
            if fcntl.fcntl(r, F_GETPIPE_SZ) != 16 * PAGE:  # already over the soft limit
                os.close(r); break
            try:
                fcntl.fcntl(r, F_SETPIPE_SZ, pages * PAGE)
            except OSError:
                os.close(r); break
            if fcntl.fcntl(r, F_GETPIPE_SZ) != pages * PAGE:
                os.close(r); break
            held.append(r); got += pages
            if len(held) > 200: break
    for r in held: os.close(r)
    return SOFT - got

def hold(pages):
    fds = []
    while pages > 0:
        p = 256
        while p > pages: p //= 2
        r, w = os.pipe(); os.close(w)
        fcntl.fcntl(r, F_SETPIPE_SZ, p * PAGE)
        fds.append(r); pages -= p
    return fds

if __name__ == "__main__":
    if sys.argv[1] == "write":
        v = int(sys.argv[2])
        base = measure()
        fds = hold(1024 + 64 * v)
        print("writer base", base, "holding", 1024 + 64 * v, "now", measure(), file=sys.stderr, flush=True)
