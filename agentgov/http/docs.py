"""Interactive docs at /docs, served with Swagger UI assets from the installed `swagger-ui-bundle`
package, so the page works with no network access."""

from __future__ import annotations

import functools
from pathlib import Path

import swagger_ui_bundle
import trio
from quart import Blueprint, Response, abort

from agentgov.http.auth import public

ASSET_DIR = Path(swagger_ui_bundle.swagger_ui_path)
JS_URL = "/docs/assets/swagger-ui-bundle.js"
CSS_URL = "/docs/assets/swagger-ui.css"
_TYPES = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
    "favicon-16x16.png": "image/png",
}

bp = Blueprint("_docs_assets", __name__)


@bp.get("/docs/assets/<name>")
@public
async def asset(name: str) -> Response:
    if name not in _TYPES:
        abort(404)
    body = await trio.to_thread.run_sync(_read, name)
    response = Response(body, content_type=_TYPES[name])
    response.cache_control.max_age = 86400
    response.cache_control.public = True
    return response


@functools.lru_cache(maxsize=len(_TYPES))
def _read(name: str) -> bytes:
    return (ASSET_DIR / name).read_bytes()
