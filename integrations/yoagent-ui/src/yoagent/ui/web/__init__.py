"""yoagent.ui.web: a local web app to chat with an agent, answer its held calls, and look
at recorded runs (GASP repositories and cassettes).

:func:`to_web` returns the app (ASGI); :func:`serve` serves it on loopback. The page's
files ship in this package: no CDN, no network at run time, no build step. It speaks
AG-UI to the server (:class:`~yoagent.ui.AgUiEndpoint`).
"""

from ._app import WebApp, new_token, to_web
from ._approvals import Hold, Preview, WebApprovals
from ._chat import RUN_SPEND_EVENT, SPEND_EVENT
from ._serve import DEFAULT_HOST, is_loopback, serve

__all__ = [
    "DEFAULT_HOST",
    "RUN_SPEND_EVENT",
    "SPEND_EVENT",
    "Hold",
    "Preview",
    "WebApp",
    "WebApprovals",
    "is_loopback",
    "new_token",
    "serve",
    "to_web",
]
