"""``$ref`` resolution over one document, on the ``referencing`` library.

``referencing`` (the resolver under ``jsonschema``) gives the exact JSON Pointer rules
(``~0``/``~1`` escapes, percent-encoded fragments) and, for OpenAPI 3.1, the JSON Schema
2020-12 base-URI rules (a schema's ``$id`` changes what its ``$ref``\\ s are relative to).
No retrieval function is installed: a ``$ref`` into another file or URL is refused with
its text quoted, never fetched. For 3.1 the registry is crawled for ``$id`` values once, up
front, within the bound :mod:`._crawl` sets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, cast

from referencing import Registry, Resource, Specification
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from ._crawl import Survey, check_crawl
from ._errors import OpenApiError
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
        registry = (
            _with_schema_ids(document, base_uri) if json_schema_ids else _opaque(document, base_uri)
        )
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
            if isinstance(ref, str) and ref in seen:
                raise RefProblem(f"a cycle of $refs: {' → '.join([*seen, ref])}")
            if len(seen) >= limit:
                chain = " → ".join([*seen, str(ref)])
                raise RefProblem(f"a chain of more than {limit} $refs: {chain}")
            seen.append(str(ref))
            current, resolver = self.lookup(ref, resolver)
        return cast(Any, current), resolver


def _opaque(document: dict[str, Any], base_uri: str) -> Registry[Any]:
    """The document as one resource with no identifiers inside (OpenAPI 3.0)."""
    resource: Resource[Any] = Specification.OPAQUE.create_resource(document)
    return Registry[Any]().with_resource(base_uri, resource).crawl()


def _with_schema_ids(document: dict[str, Any], base_uri: str) -> Registry[Any]:
    """The document's registry knowing every ``$id`` inside ``components/schemas`` (3.1).

    The components that hold an identifier are handed to ``referencing`` as the ``$defs``
    of one JSON Schema resource, so its own crawl finds the identified subschemas at any
    depth, resolving each ``$id`` against the ones around it; the crawl is surveyed first
    (:mod:`._crawl`), and a document whose YAML aliases would make it explode, or loop, is
    an :class:`OpenApiError`.
    """
    components = document.get("components")
    schemas = components.get("schemas") if isinstance(components, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    named: dict[str, Any] = cast(dict[str, Any], schemas) if isinstance(schemas, dict) else {}
    try:
        every = Survey((schema, DRAFT202012.detect(schema)) for schema in named.values())
        identified = {
            name: schema
            for index, (name, schema) in enumerate(named.items())
            if every.identified(index)
        }
        check_crawl(
            Survey(
                [
                    (document, DRAFT202012),
                    *((schema, DRAFT202012.detect(schema)) for schema in identified.values()),
                ]
            )
        )
        registry = Registry[Any]().with_resources(
            [
                (base_uri, DRAFT202012.create_resource(document)),
                (_COMPONENT_SCHEMAS_URI, DRAFT202012.create_resource({"$defs": identified})),
            ]
        )
        return registry.crawl()
    except OpenApiError:
        raise
    except Exception:  # a malformed $id, $schema or keyword: refs through ids then fail by name
        logger.warning("OpenAPI document: a $id in components/schemas is malformed; ids ignored")
        return _opaque(document, base_uri)
