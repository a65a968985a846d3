"""yoagent.openapi: the operations of an OpenAPI 3.0/3.1 document as agent tools."""

from ._adapter import OpenApiToolAdapter
from ._agent import with_openapi_file, with_openapi_spec, with_openapi_url
from ._auth import ApiKeyAuth, BasicAuth, BearerAuth, OpenApiAuth
from ._config import OpenApiConfig, OperationFilter
from ._errors import OpenApiError
from ._operation import SkippedOperation
from ._source import OpenApiToolSource
from ._tool import OpenApiTool

__all__ = [
    "ApiKeyAuth",
    "BasicAuth",
    "BearerAuth",
    "OpenApiAuth",
    "OpenApiConfig",
    "OpenApiError",
    "OpenApiTool",
    "OpenApiToolAdapter",
    "OpenApiToolSource",
    "OperationFilter",
    "SkippedOperation",
    "with_openapi_file",
    "with_openapi_spec",
    "with_openapi_url",
]
