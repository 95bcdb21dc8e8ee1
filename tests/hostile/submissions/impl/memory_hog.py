_hoard = []
while True:  # written, not just reserved, so the pages are really used
    _hoard.append(b"x" * (64 << 20))
