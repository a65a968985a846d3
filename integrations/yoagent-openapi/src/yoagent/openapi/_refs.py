"""``$ref`` resolution over one document, on the ``referencing`` library.

``referencing`` (the resolver under ``jsonschema``) gives the exact JSON Pointer rules
(``~0``/``~1`` escapes, percent-encoded fragments) and, for OpenAPI 3.1, the JSON Schema
2020-12 base-URI rules (a schema's ``$id`` changes what its ``$ref``\\ s are relative to).
No retrieval function is installed: a ``$ref`` into another file or URL is refused with
its text quoted, never fetched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, cast

from referencing import Registry, Resource, Specification
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from ._log import logger

if TYPE_CHECKING:
    from referencing._core import Resolver  # the type ``Registry.resolver()`` returns

DOCUMENT_URI: Final = "urn:yoagent-openapi:document"
"""The base URI of a document that was not read from a file or URL."""
_COMPONENT_SCHEMAS_URI: Final = "urn:yoagent-openapi:component-schemas"


class RefProblem(Exception):
    """A ``$ref`` that cannot be followed (the message quotes it), or a cycle of them."""


class Refs:
    """Resolves the ``$ref``\\ s of one OpenAPI document (3.0 or 3.1)."""

    def __init__(self, document: dict[str, Any], *, base_uri: str, json_schema_ids: bool):
        specification: Specification[Any] = DRAFT202012 if json_schema_ids else Specification.OPAQUE
        resource: Resource[Any] = specification.create_resource(document)
        registry: Registry[Any] = Registry[Any]().with_resource(base_uri, resource)
        if json_schema_ids:
            registry = _with_schema_ids(registry, document)
        self.json_schema_ids = json_schema_ids
        """True for OpenAPI 3.1, whose schemas may carry ``$id``."""
        self.root: Resolver[Any] = registry.resolver(base_uri)

    def lookup(self, ref: object, resolver: Resolver[Any]) -> tuple[Any, Resolver[Any]]:
        """What ``ref`` points at, and the resolver for the ``$ref``\\ s inside it."""
        if not isinstance(ref, str):
            raise RefProblem(f"a $ref must be a string, not {type(ref).__name__}")
        try:
            resolved = resolver.lookup(ref)
        except Unresolvable:
            local = ref.startswith("#")
            why = (
                "it points at nothing in the document"
                if local
                else ("only references inside the document are followed")
            )
            raise RefProblem(f"cannot resolve $ref {ref!r}: {why}") from None
        return resolved.contents, resolved.resolver

    def entered(self, node: dict[str, Any], resolver: Resolver[Any]) -> Resolver[Any]:
        """The resolver for the inside of schema ``node`` (3.1: its ``$id`` moves the base)."""
        if self.json_schema_ids and isinstance(node.get("$id"), str):
            return resolver.in_subresource(DRAFT202012.create_resource(node))
        return resolver

    def follow(
        self, node: Any, resolver: Resolver[Any], *, limit: int = 32
    ) -> tuple[Any, Resolver[Any]]:
        """``node`` with any chain of ``$ref``\\ s to it followed (a parameter, a body).

        A chain that returns to where it started, or runs past ``limit``, is refused.
        """
        seen: list[str] = []
        current: Any = node
        while isinstance(current, dict) and "$ref" in current:
            ref: object = cast(dict[str, Any], current)["$ref"]
            if (isinstance(ref, str) and ref in seen) or len(seen) >= limit:
                chain = " → ".join([*seen, str(ref)])
                raise RefProblem(f"a cycle of $refs: {chain}")
            seen.append(str(ref))
            current, resolver = self.lookup(ref, resolver)
        return cast(Any, current), resolver


def _with_schema_ids(registry: Registry[Any], document: dict[str, Any]) -> Registry[Any]:
    """``registry`` knowing every ``$id`` inside ``components/schemas`` (OpenAPI 3.1).

    The components are handed to ``referencing`` as the ``$defs`` of one JSON Schema
    resource, so its own crawl finds the identified subschemas at any depth, resolving
    each ``$id`` against the ones around it.
    """
    components = document.get("components")
    schemas = components.get("schemas") if isinstance(components, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if not isinstance(schemas, dict):
        return registry
    view: Resource[Any] = DRAFT202012.create_resource({"$defs": schemas})
    try:
        return registry.with_resource(_COMPONENT_SCHEMAS_URI, view).crawl()
    except Exception:  # a malformed $id (a number...): refs through ids then fail by name
        logger.warning("OpenAPI document: a $id in components/schemas is malformed; ids ignored")
        return registry
