"""A WSGI middleware: every request to the wrapped application must carry a token the verifier
takes for the requirement; the claims are in `environ["tessera.claims"]`."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Optional

from .access_token_verifier import AccessTokenVerifier, PresentedRequest, Requirement

WsgiApplication = Callable[[Dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def protect(application: WsgiApplication, verifier: AccessTokenVerifier, requirement: Requirement, *, public_url: Optional[str] = None) -> WsgiApplication:
    """Wraps `application`. `public_url` (scheme://host[:port], as clients address this service) is
    what DPoP proofs' `htu` is checked against; without it the request's own Host and scheme are
    used, which is wrong behind a proxy that rewrites them."""

    def protected(environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        origin = public_url.rstrip("/") if public_url else f"{environ.get('wsgi.url_scheme', 'http')}://{environ.get('HTTP_HOST') or environ.get('SERVER_NAME', '')}"
        request = PresentedRequest(method=environ.get("REQUEST_METHOD", "GET"), url=origin + environ.get("PATH_INFO", "/"), dpop=environ.get("HTTP_DPOP"))
        decision = verifier.check(environ.get("HTTP_AUTHORIZATION"), requirement, request)
        if not decision.allowed:
            status, headers, body = decision.response()
            start_response(f"{status} {'Forbidden' if status == 403 else 'Unauthorized'}", headers)
            return [body]
        environ["tessera.claims"] = decision.claims
        return application(environ, start_response)

    return protected
