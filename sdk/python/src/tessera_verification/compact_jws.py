"""Compact JWS parsing as Tessera's Node verifier does it: strict base64url, JSON objects only,
one spelling per signature. PyJWT supplies the signature algorithms; the parsing is done here so
that every refusal matches the Node reference (test/vectors/verification)."""
from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any, Dict, Optional, Tuple

# fullmatch, never `$`: it would let a trailing newline through.
_base64url = re.compile(r"[A-Za-z0-9_-]+")

JsonObject = Dict[str, Any]


def decode_base64url(encoded: str) -> bytes:
    """Base64url without padding, as JOSE writes it. Raises ValueError."""
    try:
        return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except (binascii.Error, ValueError) as error:
        raise ValueError("not base64url") from error


def encode_base64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def json_object_of(encoded: str) -> Optional[JsonObject]:
    """The JSON object a base64url segment holds, or None."""
    try:
        value = json.loads(decode_base64url(encoded).decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def split_compact(token: str) -> Optional[Tuple[str, str, str]]:
    """The three non-empty base64url segments of a compact JWS, or None."""
    parts = token.split(".")
    if len(parts) != 3 or not all(_base64url.fullmatch(part) for part in parts):
        return None
    return parts[0], parts[1], parts[2]


def canonical_signature(encoded: str) -> Optional[bytes]:
    """The signature's bytes, only when `encoded` is their one canonical spelling: a decoder that
    ignores a last character's unused bits would otherwise take several strings for one token."""
    try:
        raw = decode_base64url(encoded)
    except ValueError:
        return None
    return raw if encode_base64url(raw) == encoded else None


def is_safe_integer(value: Any) -> bool:
    """JavaScript's Number.isSafeInteger over what a JSON parser gives: the claim types Node checks."""
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        if not value.is_integer():
            return False
        value = int(value)
    return isinstance(value, int) and abs(value) <= 2**53 - 1
