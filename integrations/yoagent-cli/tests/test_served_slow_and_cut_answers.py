"""``served_models`` within its timeout in all, and a cut answer named as such: a server
that trickles its answer a byte at a time held start-up as long as it liked (the timeout
bounded each socket operation only), and one that hung up mid-body was "not HTTP"."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

from loopback_answers import Answer, Serve

from yoagent.cli.served import ServedModels, served_models

LIST = b'{"data": [{"id": "local-model"}]}'


def trickle(data: bytes) -> Answer:
    def answer(connection: socket.socket) -> None:
        for byte in data:
            connection.sendall(bytes([byte]))
            time.sleep(0.05)

    return answer


def headers(length: int) -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\n\r\n".encode()


def timed(base: str, timeout: float) -> tuple[ServedModels, float]:
    started = time.monotonic()
    found = served_models(base, timeout=timeout)
    return found, time.monotonic() - started


def test_a_body_trickled_a_byte_at_a_time_is_given_up_at_the_deadline(serve: Serve) -> None:
    def answer(connection: socket.socket) -> None:
        connection.sendall(headers(len(LIST)))
        trickle(LIST)(connection)

    base = serve(answer)
    found, took = timed(base, 0.4)  # the whole body would take 1.7 s
    assert found == ServedModels(base + "/models", (), "no answer within 0.4 s")
    assert took < 1.0


def test_headers_trickled_a_byte_at_a_time_are_given_up_at_the_deadline(serve: Serve) -> None:
    base = serve(trickle(headers(len(LIST)) + LIST))
    found, took = timed(base, 0.4)
    assert found == ServedModels(base + "/models", (), "no answer within 0.4 s")
    assert took < 1.0
    # its connection is shut: the exchange's thread ends now, not when the server stops
    # (the rest of the trickle would take 3 s more)
    assert exchange_ends_within(0.5)


def exchange_ends_within(seconds: float) -> bool:
    give_up = time.monotonic() + seconds
    while any(t.name == "yoagent-served-models" for t in threading.enumerate()):
        if time.monotonic() > give_up:
            return False
        time.sleep(0.01)
    return True


def test_a_body_that_stops_coming_is_cut_at_the_deadline(serve: Serve) -> None:
    """Headers at once, then silence: the read waiting in the body (the socket by then
    the response's, no longer the connection's) is cut at the deadline, not at the
    socket's own timeout a whole timeout later."""

    def answer(connection: socket.socket) -> None:
        connection.sendall(headers(len(LIST)) + LIST[:5])
        time.sleep(0.6)
        connection.sendall(LIST[5:6])  # the socket's own timeout starts again here
        connection.settimeout(5)
        with contextlib.suppress(OSError):
            connection.recv(1)  # until the client hangs up

    base = serve(answer)
    found, took = timed(base, 1.0)
    assert found == ServedModels(base + "/models", (), "no answer within 1 s")
    assert took < 2.0
    assert exchange_ends_within(0.3)  # the socket's own timeout: 0.6 s after the deadline


def test_an_answer_in_time_is_read_whole(serve: Serve) -> None:
    base = serve(lambda c: c.sendall(headers(len(LIST)) + LIST))
    assert served_models(base, timeout=2.0) == ServedModels(base + "/models", ("local-model",))


def test_a_body_shorter_than_its_length_broke_off(serve: Serve) -> None:
    base = serve(lambda c: c.sendall(headers(len(LIST) + 10) + LIST))
    assert served_models(base, timeout=2.0).problem == "the answer broke off"


def test_a_chunked_body_cut_between_chunks_broke_off(serve: Serve) -> None:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    base = serve(lambda c: c.sendall(head + b"%x\r\n" % len(LIST) + LIST + b"\r\n"))
    assert served_models(base, timeout=2.0).problem == "the answer broke off"
