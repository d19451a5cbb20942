"""What the sync and async export streams share: reading an export answer's metadata."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import httpx

EXPORT_ID_HEADER = "X-Export-Id"
_FILENAME = re.compile(r'filename="?([^";]+)"?')


class ExportInfo:
    """The metadata of a streamed export answer: `export_id` (names the signed manifest), `content_type`,
    `filename` (suggested by the service) and `size` (when the service announced it)."""

    def __init__(self, response: httpx.Response) -> None:
        self.export_id: str | None = response.headers.get(EXPORT_ID_HEADER)
        self.content_type: str | None = response.headers.get("Content-Type")
        match = _FILENAME.search(response.headers.get("Content-Disposition", ""))
        self.filename: str | None = match.group(1) if match else None
        length = response.headers.get("Content-Length")
        self.size: int | None = int(length) if length and length.isdigit() else None


def download_doc(build: Callable[..., Any]) -> str:
    """The docstring of a method writing what `build` streams to a file."""
    return (
        f"Write what `{build.__name__}` streams to the file `path` (replaced if it exists) and return an\n"
        "`ExportFile` (path, size, SHA-256, export id). The file is opened only once the answer arrived.\n\n"
        f"{build.__name__}: {build.__doc__ or ''}"
    )
