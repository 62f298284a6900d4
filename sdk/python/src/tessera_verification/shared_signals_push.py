"""Push delivery (RFC 8935): Tessera POSTs each SET to the receiver's HTTPS endpoint as
`application/secevent+jwt`, with the `Authorization` header the stream was created with, and
expects a 202. A 400 with `invalid_request` drops the SET; other errors are retried by Tessera."""
from __future__ import annotations

import hmac
import json
import logging
from http.server import BaseHTTPRequestHandler
from typing import Any, Mapping, Optional, Tuple, Type

from .revocation_projection import RevocationProjection
from .security_events import SecurityEventRefused, SecurityEventVerifier, apply_security_event

_log = logging.getLogger(__name__)
_max_body_bytes = 64 * 1024


class SharedSignalsPushReceiver:
    """Turns pushed SETs into revocations in `projection`.

    `authorization` is the exact `Authorization` header value the stream was created with
    (`delivery.authorization_header`): a request without it is refused with 401 before anything
    is parsed. None accepts any request (the endpoint is protected some other way).
    """

    def __init__(
        self,
        verifier: SecurityEventVerifier,
        projection: RevocationProjection,
        *,
        authorization: Optional[str],
        max_access_token_lifetime_seconds: int = 3600,
    ) -> None:
        self.verifier = verifier
        self.projection = projection
        self._authorization = authorization
        self._lifetime = max_access_token_lifetime_seconds

    def handle(self, headers: Mapping[str, str], body: bytes) -> Tuple[int, bytes]:
        """One pushed request: its headers (any case) and body → the status and body to answer."""
        if self._authorization is not None and not hmac.compare_digest(_header(headers, "authorization").encode("utf-8"), self._authorization.encode("utf-8")):
            return 401, b""
        if _header(headers, "content-type").split(";")[0].strip().lower() != "application/secevent+jwt":
            return _error(SecurityEventRefused("invalid_request", "Content-Type must be application/secevent+jwt"))
        try:
            claims = self.verifier.verify(body.decode("ascii"))
        except UnicodeDecodeError:
            return _error(SecurityEventRefused("invalid_request", "the SET is not a compact JWS"))
        except SecurityEventRefused as refused:
            # The jti is not known before verification: the reason is enough to find it in Tessera's log.
            _log.warning("tessera_verification: a pushed SET was refused: %s (%s)", refused.err, refused.description)
            return _error(refused)
        # Applying is idempotent, so a SET pushed twice (same jti) changes nothing the second time.
        apply_security_event(self.projection, claims, max_access_token_lifetime_seconds=self._lifetime)
        return 202, b""


def push_request_handler(receiver: SharedSignalsPushReceiver, path: str = "/") -> Type[BaseHTTPRequestHandler]:
    """A BaseHTTPRequestHandler class for http.server that hands POSTs to `path` to the receiver."""

    class PushRequestHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path.split("?")[0] != path:
                return self._answer(404, b"")
            length = int(self.headers.get("Content-Length") or "0")
            if length > _max_body_bytes:
                return self._answer(413, b"")
            status, body = receiver.handle(dict(self.headers.items()), self.rfile.read(length))
            self._answer(status, body)

        def _answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            if body:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
            # http.server logs every request line to stderr; the application's logging decides instead.
            _log.debug("tessera_verification push: " + format, *args)

    return PushRequestHandler


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return ""


def _error(refused: SecurityEventRefused) -> Tuple[int, bytes]:
    return 400, json.dumps({"err": refused.err, "description": refused.description}).encode("utf-8")
