"""OpenApiError: a document that cannot be read, or a configuration that cannot work."""

from __future__ import annotations

from yoagent.core import YoagentError


class OpenApiError(YoagentError):
    """Raised when a document cannot be loaded or turned into tools.

    The message names what was wrong and where (a JSON pointer into the document, a file
    name, a URL's origin); it never holds a credential.
    """
