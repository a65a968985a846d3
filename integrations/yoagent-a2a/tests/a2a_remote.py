"""An A2A agent in a process of its own: ``python a2a_remote.py MODEL_URL PORT``."""

from __future__ import annotations

import sys

import anyio
import uvicorn
from a2a_testing import agent_factory

from yoagent.a2a import a2a_app


async def main(model_url: str, port: int) -> None:
    url = f"http://127.0.0.1:{port}"
    app = await a2a_app(
        agent_factory(model_url), name="remote", description="A remote agent.", url=url
    )
    await uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    ).serve()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], int(sys.argv[2]))
