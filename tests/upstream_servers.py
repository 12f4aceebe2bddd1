"""Local misbehaving HTTP servers for the outbound-client tests (raw sockets, 127.0.0.1).

Each is a context manager giving a `RawServer` with `.url` (an ephemeral port) and
counters (`.connections`, `.requests`); every thread stops when the `with` block ends:

    with trickle() as server:            # headers at once, then the body 1 byte/s
    with trickle(headers_too=True):      # the status line and headers trickled too
    with huge() / huge(content_length=False):   # a 20 MB body, declared or streamed
    with closing(body=b"{}"):            # HTTP/1.1 answer, no `Connection: close`, then close
    with never():                        # accepts, reads the request, never answers
    with scripted([answer(429, headers={"Retry-After": "1"}), answer(200, b"ok")]):

`scripted` answers the requests in order (the last answer repeats) on keep-alive
connections; `answer()` builds a raw HTTP/1.1 response.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

MB = 1024 * 1024


@dataclass
class RawRequest:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


@dataclass
class RawServer:
    """A listening socket on 127.0.0.1 and what it has seen."""

    sock: socket.socket
    port: int
    stop: threading.Event = field(default_factory=threading.Event)
    connections: int = 0
    requests: list[RawRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True when the server is stopping."""
        return self.stop.wait(seconds)


Handler = Callable[[RawServer, socket.socket], None]


def read_request(conn: socket.socket, server: RawServer) -> RawRequest | None:
    """One request from `conn` (head and Content-Length body), or None at EOF."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = _recv(conn, server)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    while len(body) < length:
        chunk = _recv(conn, server)
        if not chunk:
            return None
        body += chunk
    request = RawRequest(method, target, headers, body)
    with server.lock:
        server.requests.append(request)
    return request


def _recv(conn: socket.socket, server: RawServer) -> bytes:
    while not server.stop.is_set():
        try:
            return conn.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            return b""
    return b""


def answer(
    status: int = 200,
    body: bytes = b"",
    *,
    headers: dict[str, str] | None = None,
    content_length: bool = True,
) -> bytes:
    """A raw HTTP/1.1 response."""
    lines = [f"HTTP/1.1 {status} X"]
    merged = {"Content-Type": "text/plain; charset=utf-8", **(headers or {})}
    if content_length:
        merged.setdefault("Content-Length", str(len(body)))
    lines += [f"{name}: {value}" for name, value in merged.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


@contextlib.contextmanager
def serve(handler: Handler) -> Iterator[RawServer]:
    """Run `handler(server, conn)` per accepted connection until the block ends."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.settimeout(0.05)
    server = RawServer(sock, int(sock.getsockname()[1]))
    threads: list[threading.Thread] = []
    conns: list[socket.socket] = []

    def one(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            handler(server, conn)
        with contextlib.suppress(OSError):
            conn.close()

    def accept() -> None:
        while not server.stop.is_set():
            try:
                conn, _ = sock.accept()
            except (TimeoutError, OSError):
                continue
            conn.settimeout(0.05)
            with server.lock:
                server.connections += 1
                conns.append(conn)
            thread = threading.Thread(target=one, args=(conn,), daemon=True)
            threads.append(thread)
            thread.start()

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield server
    finally:
        server.stop.set()
        acceptor.join(5)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.close()
        for thread in threads:
            thread.join(5)
        sock.close()


def _send(conn: socket.socket, data: bytes) -> None:
    conn.settimeout(5)
    conn.sendall(data)
    conn.settimeout(0.05)


def _drip(server: RawServer, conn: socket.socket, data: bytes, interval: float) -> None:
    for byte in data:
        _send(conn, bytes([byte]))
        if server.wait(interval):
            return


def trickle(
    *, headers_too: bool = False, body: bytes = b"x" * 120, interval: float = 1.0
) -> contextlib.AbstractContextManager[RawServer]:
    """Answers 200 with `body` one byte per `interval`; with `headers_too` the head as well."""

    def handle(server: RawServer, conn: socket.socket) -> None:
        if read_request(conn, server) is None:
            return
        raw = answer(200, body)
        head, body_part = raw[: len(raw) - len(body)], raw[len(raw) - len(body) :]
        if headers_too:
            _drip(server, conn, head, interval)
        else:
            _send(conn, head)
        _drip(server, conn, body_part, interval)

    return serve(handle)


def huge(
    *, size: int = 20 * MB, content_length: bool = True
) -> contextlib.AbstractContextManager[RawServer]:
    """Answers 200 with a `size`-byte body, declared in Content-Length or not."""

    def handle(server: RawServer, conn: socket.socket) -> None:
        if read_request(conn, server) is None:
            return
        headers = {} if content_length else {"Connection": "close"}
        _send(conn, answer(200, b"", headers=headers, content_length=False).rstrip(b"\r\n"))
        length = f"\r\nContent-Length: {size}" if content_length else ""
        _send(conn, f"{length}\r\n\r\n".encode())
        chunk = b"x" * 65536
        sent = 0
        while sent < size and not server.stop.is_set():
            _send(conn, chunk[: size - sent])
            sent += len(chunk)

    return serve(handle)


def closing(
    *, body: bytes = b'{"result": null, "error": null}', status: int = 200
) -> contextlib.AbstractContextManager[RawServer]:
    """Answers one request per connection without `Connection: close`, then closes."""

    def handle(server: RawServer, conn: socket.socket) -> None:
        if read_request(conn, server) is None:
            return
        _send(conn, answer(status, body, headers={"Content-Type": "application/json"}))

    return serve(handle)


def never() -> contextlib.AbstractContextManager[RawServer]:
    """Accepts and reads the request, then stays silent until the test ends."""

    def handle(server: RawServer, conn: socket.socket) -> None:
        read_request(conn, server)
        server.wait(3600)

    return serve(handle)


def scripted(answers: Sequence[bytes]) -> contextlib.AbstractContextManager[RawServer]:
    """Answers the n-th request (over all connections) with `answers[n]` (the last repeats).

    Connections are kept alive unless an answer says `Connection: close`.
    """
    counter = iter(range(1 << 30))

    def handle(server: RawServer, conn: socket.socket) -> None:
        while read_request(conn, server) is not None:
            with server.lock:
                index = min(next(counter), len(answers) - 1)
            reply = answers[index]
            _send(conn, reply)
            if b"connection: close" in reply.lower().split(b"\r\n\r\n", 1)[0]:
                return

    return serve(handle)
