"""What a refused request is answered: RFC 6750's `WWW-Authenticate` for a bearer token, RFC
9449 section 7.1's for the DPoP scheme, as @tessera/verification answers them."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from .dpop_proof import DPOP_SIGNING_ALGORITHMS

_dpop_algs = 'algs="' + " ".join(DPOP_SIGNING_ALGORITHMS) + '"'


def _quoted(value: str) -> str:
    """An RFC 9110 quoted-string: escaped, and nothing outside printable ASCII."""
    escaped = re.sub(r'[\\"]', lambda match: "\\" + match.group(0), value)
    return '"' + re.sub(r"[^\t\x20-\x7e]", "", escaped) + '"'


@dataclass(frozen=True)
class AccessDecision:
    """The answer to one request: `status` 200 with the token's `claims`, or 401/403 with `code`
    (the Node verifier's codes, e.g. ERR_TOKEN_REVOKED) and a `detail` safe to show the client."""

    status: int
    claims: Optional[Dict[str, Any]] = None
    code: Optional[str] = None
    detail: Optional[str] = None
    #: The permission a valid token lacked (403).
    scope: Optional[str] = None
    #: "DPoP" when the request presented the DPoP scheme: its challenge is then a DPoP one.
    scheme: Optional[str] = None

    @property
    def allowed(self) -> bool:
        return self.status == 200

    @property
    def www_authenticate(self) -> Optional[str]:
        """The `WWW-Authenticate` value of a refusal (several challenges comma-separated), or None for a 200."""
        if self.status == 200:
            return None
        if self.scheme == "DPoP":
            if self.status == 403:
                return f'DPoP error="insufficient_scope", scope={_quoted(self.scope or "")}, {_dpop_algs}'
            error = "invalid_dpop_proof" if self.code == "ERR_DPOP_PROOF_INVALID" else "invalid_token"
            return f'DPoP error="{error}", error_description={_quoted(self.detail or "")}, {_dpop_algs}'
        if self.status == 403:
            return f'Bearer error="insufficient_scope", scope={_quoted(self.scope or "")}'
        if self.code == "ERR_TOKEN_MISSING":
            return f"Bearer, DPoP {_dpop_algs}"
        if self.code == "ERR_TOKEN_DPOP_BOUND":
            return f'Bearer error="invalid_token", DPoP {_dpop_algs}'
        return 'Bearer error="invalid_token"'

    @property
    def error(self) -> Optional[str]:
        """The challenge's `error` code: invalid_token, insufficient_scope, invalid_dpop_proof, or None."""
        challenge = self.www_authenticate
        if challenge is None:
            return None
        found = re.match(r'^\w+(?: error="([^"]+)")?', challenge)
        return found.group(1) if found else None

    def response(self) -> Tuple[int, List[Tuple[str, str]], bytes]:
        """A refusal as an HTTP answer: status, headers and an RFC 9457 problem+json body."""
        title = "Forbidden" if self.status == 403 else "Unauthorized"
        body = json.dumps({"type": "about:blank", "title": title, "status": self.status, "detail": self.detail}).encode("utf-8")
        headers = [("Content-Type", "application/problem+json"), ("Content-Length", str(len(body)))]
        if self.www_authenticate is not None:
            headers.append(("WWW-Authenticate", self.www_authenticate))
        return self.status, headers, body
