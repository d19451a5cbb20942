"""Interactive docs at /docs: Swagger UI 5 (which reads OpenAPI 3.1) from the installed `swagger-ui-py`
package's static files, so the page works with no network access.

quart-schema's own page is turned off (`swagger_ui_path=None`); this blueprint serves a complete HTML5
page and the few assets it loads. Neither the page nor the assets appear in the OpenAPI document.
"""

from __future__ import annotations

import functools
from pathlib import Path

import swagger_ui
import trio
from quart import Blueprint, Quart, Response, abort
from quart_schema import hide

from agentgov.http.auth import public

ASSET_DIR = Path(swagger_ui.__file__).parent / "static"
JS_URL = "/docs/assets/swagger-ui-bundle.js"
CSS_URL = "/docs/assets/swagger-ui.css"
OPENAPI_URL = "/openapi.json"
_TYPES = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
    "favicon-16x16.png": "image/png",
    "LICENSE": "text/plain; charset=utf-8",
}

PAGE = f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>agentgov API</title>
  <link rel="stylesheet" href="{CSS_URL}">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="{JS_URL}"></script>
  <script>
    window.ui = SwaggerUIBundle({{
      url: "{OPENAPI_URL}",
      dom_id: "#swagger-ui",
      deepLinking: true,
      presets: [SwaggerUIBundle.presets.apis],
      layout: "BaseLayout",
      validatorUrl: null,
      showExtensions: true,
      showCommonExtensions: true
    }});
  </script>
</body>
</html>
"""

bp = Blueprint("_docs_assets", __name__)


@public
@hide
async def page() -> Response:
    """The Swagger UI page (HTML5, assets served locally)."""
    return Response(PAGE, content_type="text/html; charset=utf-8")


def install(app: Quart) -> None:
    """Serve the page at /docs (endpoint `swagger_ui`, the name quart-schema's own page had) and the assets."""
    app.add_url_rule("/docs", "swagger_ui", page, methods=["GET"])
    app.register_blueprint(bp)


@bp.get("/docs/assets/<name>")
@public
@hide
async def asset(name: str) -> Response:
    """One Swagger UI asset; any other name is a 404."""
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
