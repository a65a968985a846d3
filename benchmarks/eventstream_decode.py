"""Eventstream decode throughput: yoagent's decoder against botocore's EventStreamBuffer.

Both decode the same bodies, fed in the same chunks, to headers + payload per frame, in the
same run (interleaved, median of ``--repeat`` runs). Bodies:

- **bedrock-like**: 2,000 ConverseStream frames as Bedrock sends them (three string
  headers, a JSON payload of 100-200 bytes with its ``p`` padding), fed in 4 KiB chunks
  (what a socket read typically hands over);
- **same, 64 KiB chunks** and **same, one chunk** (the whole body at once);
- **split frames**: the body fed in 97-byte chunks, so nearly every frame is split;
- **big payloads**: 200 frames with a 64 KiB payload each, 16 KiB chunks.

Run: ``uv run python benchmarks/eventstream_decode.py`` (needs the dev dependency
botocore). Prints a Markdown table; the target is at least 2x botocore's throughput. The
last column is a floor: one ``zlib.crc32`` pass over the same bytes, which both decoders
must do (it bounds what any decoder can reach on large payloads).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import zlib
from collections.abc import Callable

from botocore.eventstream import EventStreamBuffer

from yoagent.providers._eventstream import EventStreamDecoder, encode_frame

PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def bedrock_body(frames: int) -> bytes:
    out: list[bytes] = []
    for i in range(frames):
        payload = {
            "contentBlockIndex": 0,
            "delta": {"text": f" token {i} " * (1 + i % 8)},
            "p": PADDING[: 10 + i % 40],
        }
        out.append(
            encode_frame(
                {
                    ":event-type": "contentBlockDelta",
                    ":content-type": "application/json",
                    ":message-type": "event",
                },
                json.dumps(payload, separators=(",", ":")).encode(),
            )
        )
    return b"".join(out)


def big_body(frames: int, size: int) -> bytes:
    payload = b"x" * size
    return b"".join(
        encode_frame({":event-type": "chunk", ":message-type": "event"}, payload)
        for _ in range(frames)
    )


def chunked(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def ours(chunks: list[bytes]) -> int:
    decoder = EventStreamDecoder()
    count = 0
    for chunk in chunks:
        for frame in decoder.feed(chunk):
            count += len(frame.payload) > 0 and len(frame.headers)
    decoder.close()
    return count


def botocore(chunks: list[bytes]) -> int:
    buffer = EventStreamBuffer()
    count = 0
    for chunk in chunks:
        buffer.add_data(chunk)
        for message in buffer:
            count += len(message.payload) > 0 and len(message.headers)
    return count


def crc_floor(chunks: list[bytes]) -> int:
    """The unavoidable work: one CRC-32 pass over every byte (both decoders check it)."""
    crc = 0
    for chunk in chunks:
        crc = zlib.crc32(chunk, crc)
    return crc


def timed(decode: Callable[[list[bytes]], int], chunks: list[bytes]) -> float:
    start = time.perf_counter()
    decode(chunks)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    body = bedrock_body(2000)
    cases = {
        "bedrock-like, 4 KiB chunks": chunked(body, 4096),
        "bedrock-like, 64 KiB chunks": chunked(body, 65536),
        "bedrock-like, one chunk": [body],
        "split frames, 97-byte chunks": chunked(body, 97),
        "big payloads (64 KiB), 16 KiB chunks": chunked(big_body(200, 65536), 16384),
    }
    print("| body | MB | ours MB/s | botocore MB/s | × botocore | CRC-32 floor MB/s |")
    print("|---|---|---|---|---|---|")
    for name, chunks in cases.items():
        assert ours(chunks) == botocore(chunks)
        size = sum(len(c) for c in chunks)
        mine: list[float] = []
        theirs: list[float] = []
        floor: list[float] = []
        for _ in range(3):
            timed(ours, chunks), timed(botocore, chunks)
        for _ in range(args.repeat):
            mine.append(timed(ours, chunks))
            theirs.append(timed(botocore, chunks))
            floor.append(timed(crc_floor, chunks))
        ours_rate = size / statistics.median(mine) / 1e6
        boto_rate = size / statistics.median(theirs) / 1e6
        floor_rate = size / statistics.median(floor) / 1e6
        print(
            f"| {name} | {size / 1e6:.2f} | {ours_rate:.1f} | {boto_rate:.1f} "
            f"| {ours_rate / boto_rate:.2f} | {floor_rate:.0f} |"
        )


if __name__ == "__main__":
    main()
