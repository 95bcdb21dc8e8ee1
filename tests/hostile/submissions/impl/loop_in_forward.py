def _spin_forever(self, *args, **kwargs):
    while True:
        pass


LuongAttention.forward = _spin_forever
