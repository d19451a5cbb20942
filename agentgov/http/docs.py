"""Interactive docs at /docs, served with Swagger UI assets from the installed `swagger-ui-bundle`
package, so the page works with no network access."""

from __future__ import annotations

from pathlib import Path

import swagger_ui_bundle
from quart import Blueprint, Response, abort, send_from_directory

from agentgov.http.auth import public

ASSET_DIR = Path(swagger_ui_bundle.swagger_ui_path)
JS_URL = "/docs/assets/swagger-ui-bundle.js"
CSS_URL = "/docs/assets/swagger-ui.css"
_ALLOWED = {"swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png", "favicon-16x16.png"}

bp = Blueprint("_docs_assets", __name__)


@bp.get("/docs/assets/<name>")
@public
async def asset(name: str) -> Response:
    if name not in _ALLOWED:
        abort(404)
    response = await send_from_directory(ASSET_DIR, name)
    response.cache_control.max_age = 86400
    response.cache_control.public = True
    return response
