"""Temporal's codec-server protocol: payloads as JSON, encoded or decoded by a codec.

A request and a response body are both ``{"payloads": [{"metadata": {key: base64},
"data": base64}]}``. This is the part of ``sessionflow codec-server`` that touches
payloads; the command itself (HTTP, CORS, the token) lives in the CLI.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any, Literal, cast

from temporalio.api.common.v1 import Payload

from sessionflow.session.errors import UserError
from sessionflow.temporal.storage._encryption import EncryptionCodec

__all__ = ["CodecRequestError", "apply_codec"]


class CodecRequestError(UserError, ValueError):
    """The request body is not a codec-server request (the message says what is wrong)."""


def _payloads_from(body: bytes) -> list[Payload]:
    try:
        document: Any = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise CodecRequestError(f"the body is not JSON: {error}") from None
    items: Any = cast(dict[str, Any], document).get("payloads") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise CodecRequestError('the body is not {"payloads": [...]}')
    payloads: list[Payload] = []
    for index, item in enumerate(cast(list[Any], items)):
        if not isinstance(item, dict):
            raise CodecRequestError(f"payload {index} is not an object")
        entry = cast(dict[str, Any], item)
        metadata: Any = entry.get("metadata")
        metadata = {} if metadata is None else metadata
        data: Any = entry.get("data")
        data = "" if data is None else data
        if not isinstance(metadata, dict) or not isinstance(data, str):
            raise CodecRequestError(f"payload {index}: metadata must be an object and data a base64 string")
        try:
            payload = Payload(
                metadata={
                    str(k): base64.b64decode(v, validate=True)
                    for k, v in cast(dict[str, Any], metadata).items()
                },
                data=base64.b64decode(data, validate=True),
            )
        except (binascii.Error, ValueError, TypeError):
            raise CodecRequestError(f"payload {index}: metadata values and data must be base64") from None
        payloads.append(payload)
    return payloads


def _payloads_json(payloads: Sequence[Payload]) -> bytes:
    return json.dumps(
        {
            "payloads": [
                {
                    "metadata": {k: base64.b64encode(v).decode() for k, v in p.metadata.items()},
                    "data": base64.b64encode(p.data).decode(),
                }
                for p in payloads
            ]
        }
    ).encode()


def apply_codec(codec: EncryptionCodec, operation: Literal["encode", "decode"], body: bytes) -> bytes:
    """The response body for a request `body`, on this thread.

    Raises:
        CodecRequestError: `body` is not a codec-server request.
        PayloadDecryptionError: A payload's key is not in the ring, or it fails authentication.
    """
    payloads = _payloads_from(body)
    result = codec.encode_now(payloads) if operation == "encode" else codec.decode_now(payloads)
    return _payloads_json(result)
