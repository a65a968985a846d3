"""The HTTP pool when replies take time: N requests at once, three rounds, against a loopback
server (in its own process) that answers each after ``--delay`` seconds.

Scenario d's server answers at once, so a batch never has N requests in flight and the
pool's cost with N connections open stays hidden; a model's stream takes seconds. Prints,
per round, the client process's CPU per request and the connections the server accepted.

    uv run python benchmarks/pool_latency.py --n 1000                   # yoagent's http_client()
    uv run python benchmarks/pool_latency.py --n 1000 --keepalive 20    # httpx + httpcore, capped
    uv run python benchmarks/pool_latency.py --n 1000 --keepalive none  # httpx + httpcore, no cap
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import time

import httpx


async def _serve(delay: float) -> None:
    accepted = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1
        try:
            while await reader.readline():
                while (await reader.readline()) not in (b"\r\n", b""):
                    pass
                await asyncio.sleep(delay)
                body = str(accepted).encode()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=4096)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


def _raise_nofile(n: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 256), hard))


async def _client(url: str, n: int, keepalive: str, rounds: int) -> None:
    from yoagent.core.support import http_client

    if keepalive == "yoagent":
        client = http_client()
    else:
        cap = None if keepalive == "none" else int(keepalive)
        client = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=cap)
        )
    async with client:
        for index in range(rounds):
            c0, w0 = time.process_time(), time.perf_counter()
            replies = await asyncio.gather(*(client.get(url) for _ in range(n)))
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            accepted = max(int(reply.text) for reply in replies)
            print(
                f"{keepalive} N={n} round {index}: {cpu * 1e3 / n:.2f} ms CPU/request,"
                f" wall {wall:.2f} s, connections accepted so far >= {accepted}",
                flush=True,
            )


def main() -> None:
    """Start the server, run the rounds, print the figures."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--delay", type=float, default=0.05, help="the server's reply time, s")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keepalive", default="yoagent", help="yoagent, none or a number")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    _raise_nofile(a.n)
    if a.serve:
        asyncio.run(_serve(a.delay))
        return
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--n", str(a.n), "--delay", str(a.delay)],
        stdout=subprocess.PIPE,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        asyncio.run(_client(f"http://127.0.0.1:{port}/", a.n, a.keepalive, a.rounds))
    finally:
        server.terminate()
        server.wait()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
