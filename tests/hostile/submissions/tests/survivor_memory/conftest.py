"""In the fast zygote (it imports this conftest), serve the same UDP key-value store as the
implementation's survivor, from a thread: in the fast pass the suite then kills by the store too."""
import socket
import threading


def _serve(sock):
    store = {}
    while True:
        data, peer = sock.recvfrom(65535)
        verb, _, rest = data.partition(b" ")
        key, _, value = rest.partition(b" ")
        if verb == b"PUT":
            store[key] = value
            sock.sendto(b"ok", peer)
        else:
            sock.sendto(store.get(key, b""), peer)


try:
    _sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    _sock.bind(("127.0.0.1", 47474))
except OSError:
    pass
else:
    threading.Thread(target=_serve, args=(_sock,), daemon=True).start()
