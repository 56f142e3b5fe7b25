"""The OpenAPI 3.1 document, generated from `ROUTES` and the types with `msgspec.json.schema`."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from sessionflow_server._routes import ROUTES, ApiRoute
from sessionflow_server._types import ErrorResponse

__all__ = ["OPENAPI_PATH", "openapi_document"]

OPENAPI_PATH = "/openapi.json"
_REF = "#/components/schemas/{name}"


def _name(kind: Any) -> str:
    return str(getattr(kind, "__name__", kind))


def _operation(route: ApiRoute) -> dict[str, Any]:
    reference = {"$ref": _REF.format(name=_name(route.response))}
    if route.event_stream:
        content = {"text/event-stream": {"schema": {"type": "string"}, "x-event-data": reference}}
    elif route.media_type != "application/json":
        content = {route.media_type: {"schema": {"type": "string"}}}
    else:
        content = {"application/json": {"schema": reference}}
    responses: dict[str, Any] = {str(route.status): {"description": route.summary, "content": content}}
    error = {"application/json": {"schema": {"$ref": _REF.format(name="ErrorResponse")}}}
    for status in sorted({*route.errors, *((401, 429) if route.authenticated else ())}):
        responses[str(status)] = {"description": "an error", "content": error}
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"{(\w+)}", route.path)
    ]
    parameters += [
        {
            "name": q.name,
            "in": "query",
            "required": False,
            "description": q.description,
            "schema": {"type": q.schema_type},
        }
        for q in route.query
    ]
    if route.event_stream:
        parameters.append(
            {"name": "Last-Event-ID", "in": "header", "required": False, "schema": {"type": "string"}}
        )
    operation: dict[str, Any] = {"operationId": route.name, "summary": route.summary, "responses": responses}
    if parameters:
        operation["parameters"] = parameters
    if route.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": _REF.format(name=_name(route.body))}}},
        }
    if not route.authenticated:
        operation["security"] = []
    return operation


def openapi_document(version: str) -> dict[str, Any]:
    kinds: list[Any] = [ErrorResponse]
    for route in ROUTES:
        if route.media_type == "application/json":
            kinds.append(route.response)
        if route.body is not None:
            kinds.append(route.body)
    _, components = msgspec.json.schema_components(kinds, ref_template=_REF)
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {"title": "sessionflow", "version": version},
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }
