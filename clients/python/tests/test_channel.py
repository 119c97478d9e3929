"""redlockd.channel's options against a replica slow to answer a new connection (a loaded
machine, a replica's cold JVM): the connection is given the time it needs."""
import socket
import threading
import time
import unittest

import redlockd
from fakeserver import FakeServerCase


class SlowHandshakeProxy:
    """Forwards TCP to ``target``, holding the server's first bytes on each connection (its
    HTTP/2 settings) back for ``delay`` seconds: the handshake takes that long."""

    def __init__(self, target: str, delay: float) -> None:
        host, port = target.rsplit(":", 1)
        self._upstream = (host, int(port))
        self._delay = delay
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._sockets = [self._listener]
        self._closed = False
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._upstream)
            self._sockets += [client, server]
            threading.Thread(target=self._pipe, args=(client, server, 0.0), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, self._delay), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket, first_delay: float) -> None:
        delay = first_delay
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if delay:
                    time.sleep(delay)
                    delay = 0.0
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self._closed = True
        for s in self._sockets:
            s.close()


class SlowHandshakeTest(FakeServerCase, unittest.TestCase):
    def test_a_handshake_slower_than_the_reconnect_backoff_still_connects(self):
        # gRPC takes grpc.min_reconnect_backoff_ms as the least time a connection attempt gets:
        # set to 100 ms, a replica that answered the handshake in 400 ms was never reached.
        proxy = SlowHandshakeProxy(self.target, 0.4)
        self.addCleanup(proxy.close)
        channel = redlockd.channel([proxy.address])
        self.channels.append(channel)
        lease = self.make_client(channel).acquire("orders/1", ttl=10)
        self.assertTrue(lease.valid)
