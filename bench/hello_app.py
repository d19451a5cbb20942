"""The baseline: a bare Quart-Trio hello-world served by hypercorn's trio worker, like our service.

`python bench/hello_app.py --port 8100`
"""

from __future__ import annotations

import argparse

import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from quart_trio import QuartTrio

app = QuartTrio("hello")


@app.get("/")
async def hello() -> str:
    return "hello"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8100)
    args = parser.parse_args()
    config = Config()
    config.bind = [f"127.0.0.1:{args.port}"]
    config.accesslog = None
    trio.run(serve, app, config)


if __name__ == "__main__":
    main()
