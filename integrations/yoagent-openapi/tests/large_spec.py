"""A large OpenAPI 3.0 document shaped like real ones: 240 operations over 45 resources.

Deterministic (the same dict every time). What it holds, so the tests can count on it:

- 45 resources × list/create/get/update/delete = 225 operations, plus 15 extras = 240;
- shared ``components/parameters`` (``Limit``, ``Cursor``, ``RequestId``) and
  ``components/requestBodies`` by ``$ref``, path-level parameters, one path with its own
  ``servers``;
- ``allOf`` (every resource = ``Base`` + its fields, ``id``/``createdAt`` readOnly),
  ``oneOf`` with a discriminator (every update body), ``nullable`` and boolean
  ``exclusiveMinimum`` (3.0 dialect);
- ``$ref`` cycles: ``Category.parent`` (self), ``TreeNode`` through ``allOf``, and
  ``Folder`` ↔ ``Item`` (mutual) in request bodies — those three creates and updates
  are left out; ``Comment.replies`` only in responses — those operations stay;
- names real documents have: two operations sharing an operationId, one 90 characters
  long, one with dots and slashes, two with none, a path parameter and a query
  parameter of the same name, a JSON:API-style ``filter[status]`` parameter.
"""

from __future__ import annotations

from typing import Any, Final

RESOURCES: Final = [
    "account", "address", "alert", "api_token", "attachment", "audit_event", "branch",
    "build", "calendar", "campaign", "category", "channel", "check_run", "comment",
    "contact", "contract", "coupon", "customer", "dashboard", "deployment", "device",
    "discount", "domain", "folder", "invoice", "item", "job", "label", "license",
    "milestone", "note", "order", "payment", "pipeline", "plan", "project", "refund",
    "release", "report", "repository", "shipment", "subscription", "team", "tree_node",
    "webhook",
]  # fmt: skip
RECURSIVE_BODIES: Final = {"category", "tree_node", "folder", "item"}
"""Resources whose create/update bodies are recursive (their operations are left out)."""
EXTRA_OPERATIONS: Final = 15


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _schemas() -> dict[str, Any]:
    schemas: dict[str, Any] = {
        "Base": {
            "type": "object",
            "required": ["id"],
            "properties": {
                "id": {"type": "string", "readOnly": True},
                "createdAt": {"type": "string", "format": "date-time", "readOnly": True},
                "note": {"type": "string", "nullable": True},
            },
        },
        "Money": {
            "type": "object",
            "required": ["amount", "currency"],
            "properties": {
                "amount": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
                "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
            },
        },
        "Error": {
            "type": "object",
            "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
        },
    }
    for resource in RESOURCES:
        name = _camel(resource)
        fields: dict[str, Any] = {
            "name": {"type": "string", "minLength": 1, "maxLength": 200},
            "status": {"type": "string", "enum": ["active", "archived"], "nullable": True},
            "price": {"$ref": "#/components/schemas/Money"},
            "labels": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
        }
        if resource == "category":
            fields["parent"] = {"$ref": "#/components/schemas/Category"}
        if resource == "folder":
            fields["items"] = {"type": "array", "items": {"$ref": "#/components/schemas/Item"}}
        if resource == "item":
            fields["folder"] = {"$ref": "#/components/schemas/Folder"}
        if resource == "comment":
            fields["replies"] = {"type": "array", "items": {"$ref": "#/components/schemas/Comment"}}
        schemas[name] = {
            "allOf": [
                {"$ref": "#/components/schemas/Base"},
                {"type": "object", "required": ["name"], "properties": fields},
            ]
        }
        schemas[f"{name}Create"] = (
            {"$ref": f"#/components/schemas/{name}"}
            if resource in RECURSIVE_BODIES
            else {"type": "object", "required": ["name"], "properties": fields}
            if resource != "comment"
            else {
                "type": "object",
                "required": ["name"],
                "properties": {k: v for k, v in fields.items() if k != "replies"},
            }
        )
        schemas[f"{name}Rename"] = {
            "type": "object",
            "required": ["kind", "name"],
            "properties": {
                "kind": {"type": "string", "enum": ["rename"]},
                "name": {"type": "string"},
            },
        }
        schemas[f"{name}Archive"] = {
            "type": "object",
            "required": ["kind"],
            "properties": {
                "kind": {"type": "string", "enum": ["archive"]},
                "reason": {"type": "string", "nullable": True},
            },
        }
        schemas[f"{name}Update"] = {
            "oneOf": [
                {"$ref": f"#/components/schemas/{name}Rename"},
                {"$ref": f"#/components/schemas/{name}Archive"},
            ]
            + ([{"$ref": f"#/components/schemas/{name}"}] if resource in RECURSIVE_BODIES else []),
            "discriminator": {"propertyName": "kind"},
        }
    schemas["TreeNode"] = {
        "allOf": [
            {"$ref": "#/components/schemas/Base"},
            {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "children": {
                        "type": "array",
                        "items": {"$ref": "#/components/schemas/TreeNode"},
                    },
                },
            },
        ]
    }
    return schemas


def _responses(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "200": {"description": "OK", "content": {"application/json": {"schema": schema}}},
        "default": {
            "description": "error",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        },
    }


def _resource_paths(resource: str) -> dict[str, Any]:
    name = _camel(resource)
    ref = {"$ref": f"#/components/schemas/{name}"}
    collection, member = f"/{resource}s", f"/{resource}s/{{{resource}Id}}"
    tag = resource.split("_")[0]
    return {
        collection: {
            "get": {
                "operationId": f"list{name}s",
                "tags": [tag],
                "summary": f"List {resource.replace('_', ' ')}s",
                "parameters": [
                    {"$ref": "#/components/parameters/Limit"},
                    {"$ref": "#/components/parameters/Cursor"},
                    {"$ref": "#/components/parameters/RequestId"},
                    {
                        "name": "filter[status]",
                        "in": "query",
                        "schema": {"type": "string", "enum": ["active", "archived"]},
                    },
                ],
                "responses": _responses({"type": "array", "items": ref}),
            },
            "post": {
                "operationId": f"create{name}",
                "tags": [tag],
                "summary": f"Create a {resource.replace('_', ' ')}",
                "requestBody": {"$ref": f"#/components/requestBodies/{name}Create"},
                "responses": _responses(ref),
            },
        },
        member: {
            "parameters": [
                {
                    "name": f"{resource}Id",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string"},
                }
            ],
            "get": {
                "operationId": f"get{name}",
                "tags": [tag],
                "responses": _responses(ref),
            },
            "patch": {
                "operationId": f"update{name}",
                "tags": [tag],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": f"#/components/schemas/{name}Update"}
                        }
                    },
                },
                "responses": _responses(ref),
            },
            "delete": {
                "operationId": f"delete{name}",
                "tags": [tag],
                "deprecated": resource == "license",
                "parameters": [
                    {
                        "name": "If-Match",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {"204": {"description": "deleted"}},
            },
        },
    }


def _extra_paths() -> dict[str, Any]:
    plain = _responses({"type": "object"})
    long_id = "exportAllHistoricalAuditEventsForEveryRepositoryInTheOrganizationAsCompressedArchive"
    return {
        "/health": {"get": {"summary": "Liveness", "responses": plain}},
        "/metrics": {"get": {"responses": plain}},
        "/search/items": {"get": {"operationId": "search", "tags": ["search"], "responses": plain}},
        "/search/users": {"get": {"operationId": "search", "tags": ["search"], "responses": plain}},
        "/exports/audit": {
            "post": {"operationId": long_id, "tags": ["export"], "responses": plain}
        },
        "/v2/orders/all": {"get": {"operationId": "orders.list-v2/all", "responses": plain}},
        "/teams/{id}/members": {
            "get": {
                "operationId": "listTeamMembers",
                "tags": ["team"],
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}},
                    {"name": "id", "in": "query", "schema": {"type": "string"}},
                    {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                ],
                "responses": plain,
            }
        },
        "/tree_nodes/{tree_nodeId}/move": {
            "servers": [{"url": "https://moves.example.com/v1"}],
            "post": {
                "operationId": "moveTreeNode",
                "tags": ["tree"],
                "parameters": [
                    {
                        "name": "tree_nodeId",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"to": {"type": "string"}},
                            }
                        }
                    }
                },
                "responses": _responses({"$ref": "#/components/schemas/TreeNode"}),
            },
        },
        **{
            f"/reports/{kind}": {
                "get": {
                    "operationId": f"report{kind.capitalize()}",
                    "tags": ["report"],
                    "parameters": [{"$ref": "#/components/parameters/Limit"}],
                    "responses": plain,
                }
            }
            for kind in ("daily", "weekly", "monthly", "quarterly", "yearly", "custom", "adhoc")
        },
    }


def make_large_spec() -> dict[str, Any]:
    """The document (a fresh dict each call)."""
    paths: dict[str, Any] = {}
    for resource in RESOURCES:
        paths.update(_resource_paths(resource))
    paths.update(_extra_paths())
    request_bodies = {
        f"{_camel(resource)}Create": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {"$ref": f"#/components/schemas/{_camel(resource)}Create"}
                }
            },
        }
        for resource in RESOURCES
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "A large API", "version": "2024-06-01"},
        "servers": [
            {
                "url": "https://{region}.api.example.com/v1",
                "variables": {"region": {"default": "eu"}},
            }
        ],
        "paths": paths,
        "components": {
            "schemas": _schemas(),
            "parameters": {
                "Limit": {
                    "name": "limit",
                    "in": "query",
                    "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                },
                "Cursor": {"name": "cursor", "in": "query", "schema": {"type": "string"}},
                "RequestId": {
                    "name": "X-Request-ID",
                    "in": "header",
                    "schema": {"type": "string", "format": "uuid"},
                },
            },
            "requestBodies": request_bodies,
        },
    }
