"""Security Event Tokens (RFC 8417) from Tessera's Shared Signals transmitter: verified (ES256
with the issuer's JWKS, `typ` secevent+jwt, `iss`, `aud`) and applied to a RevocationProjection.

What each SET means for access tokens (the `tessera_` members are epoch seconds):

- CAEP session-revoked naming a session (`sub_id.session`, the family id): refuse every token with
  that `fid`, until `tessera_rejects_until`;
- CAEP session-revoked naming only a user (`sub`, the account id): refuse the account's tokens
  with `iat` before `tessera_not_before`;
- CAEP credential-change, `change_type` revoke, with `tessera_client_id`: refuse that client id's
  tokens with `iat` before `tessera_not_before` (without it the credential is revoked but its
  tokens stay valid until they expire);
- `urn:tessera:secevent:token-rotated`: refuse tokens of the family with `gen` below `generation`.

From a transmitter that sends no `tessera_` members, `tessera_not_before` is the
`event_timestamp`, and `tessera_rejects_until` the `event_timestamp` plus the longest access-token
lifetime this service is configured with.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

from jwt.algorithms import ECAlgorithm

from .compact_jws import canonical_signature, is_safe_integer, json_object_of, split_compact
from .issuer_keys import IssuerKeys
from .revocation_projection import RevocationProjection

SESSION_REVOKED = "https://schemas.openid.net/secevent/caep/event-type/session-revoked"
CREDENTIAL_CHANGE = "https://schemas.openid.net/secevent/caep/event-type/credential-change"
TOKEN_ROTATED = "urn:tessera:secevent:token-rotated"
VERIFICATION = "https://schemas.openid.net/secevent/ssf/event-type/verification"

#: What a receiver asks a stream for: every event type that refuses access tokens.
REVOCATION_EVENT_TYPES = (SESSION_REVOKED, CREDENTIAL_CHANGE, TOKEN_ROTATED)

_es256 = ECAlgorithm(ECAlgorithm.SHA256)
_max_set_length = 16 * 1024


class SecurityEventRefused(Exception):
    """A SET that is not taken. `err` is RFC 8935's error code for it: invalid_request,
    invalid_key, invalid_issuer or invalid_audience."""

    def __init__(self, err: str, description: str) -> None:
        super().__init__(description)
        self.err = err
        self.description = description


class SecurityEventVerifier:
    """Checks SETs from one transmitter for one stream: signature, typ, iss, aud, jti, iat."""

    def __init__(self, keys: IssuerKeys, issuer: str, audience: Union[str, Iterable[str]]) -> None:
        self.keys = keys
        self.issuer = issuer
        self.audiences = frozenset([audience] if isinstance(audience, str) else audience)

    def verify(self, security_event_token: str) -> Dict[str, Any]:
        """The SET's claims; raises SecurityEventRefused."""
        segments = split_compact(security_event_token) if len(security_event_token) <= _max_set_length else None
        header = json_object_of(segments[0]) if segments else None
        if segments is None or header is None:
            raise SecurityEventRefused("invalid_request", "the SET is not a compact JWS")
        if header.get("typ") != "secevent+jwt":
            raise SecurityEventRefused("invalid_request", "the SET's typ is not secevent+jwt")
        if header.get("alg") != "ES256":
            raise SecurityEventRefused("invalid_request", "the SET's alg is not ES256")
        kid = header.get("kid")
        key = self.keys.find_or_refresh(kid) if isinstance(kid, str) else None
        if key is None:
            raise SecurityEventRefused("invalid_key", "the SET's kid is not in the transmitter's JWKS")
        signature = canonical_signature(segments[2])
        try:
            valid = signature is not None and len(signature) == 64 and _es256.verify(f"{segments[0]}.{segments[1]}".encode("ascii"), key, signature)
        except Exception:  # cryptography's errors for a signature that cannot be one
            valid = False
        if not valid:
            raise SecurityEventRefused("invalid_key", "the SET's signature does not verify")
        claims = json_object_of(segments[1])
        if claims is None:
            raise SecurityEventRefused("invalid_request", "the SET's claims are not a JSON object")
        if claims.get("iss") != self.issuer:
            raise SecurityEventRefused("invalid_issuer", "the SET's iss is not the transmitter's issuer")
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if not any(isinstance(each, str) and each in self.audiences for each in audiences):
            raise SecurityEventRefused("invalid_audience", "the SET's aud is not this stream's")
        if not isinstance(claims.get("jti"), str) or not is_safe_integer(claims.get("iat")) or not isinstance(claims.get("events"), dict):
            raise SecurityEventRefused("invalid_request", "the SET lacks jti, iat or events")
        return claims


def apply_security_event(projection: RevocationProjection, claims: Dict[str, Any], *, max_access_token_lifetime_seconds: int) -> int:
    """Applies a verified SET's events to the projection; returns how many refuse tokens (0 for a
    verification event, a claims change, or a credential revoked without a token cut)."""
    subject = claims.get("sub_id") if isinstance(claims.get("sub_id"), dict) else {}
    user = subject if subject.get("format") == "iss_sub" else subject.get("user") or {}
    session = subject if subject.get("format") == "opaque" else subject.get("session") or {}
    account_id: Optional[str] = user.get("sub") if isinstance(user.get("sub"), str) else None
    family_id: Optional[str] = session.get("id") if isinstance(session.get("id"), str) else None
    applied = 0
    for event_type, event in claims.get("events", {}).items():
        if not isinstance(event, dict):
            continue
        at = _seconds(event.get("event_timestamp"), _seconds(claims.get("iat"), 0))
        not_before = _seconds(event.get("tessera_not_before"), at)
        rejects_until = _seconds(event.get("tessera_rejects_until"), at + max_access_token_lifetime_seconds)
        if event_type == SESSION_REVOKED and family_id is not None:
            projection.revoke_family(family_id, rejects_until)
        elif event_type == SESSION_REVOKED and account_id is not None:
            projection.cut_account(account_id, not_before, rejects_until)
        elif event_type == CREDENTIAL_CHANGE and event.get("change_type") == "revoke" and isinstance(event.get("tessera_client_id"), str):
            projection.cut_credential(event["tessera_client_id"], not_before, rejects_until)
        elif event_type == TOKEN_ROTATED and family_id is not None and is_safe_integer(event.get("generation")):
            projection.rotate_family(family_id, int(event["generation"]), rejects_until)
        else:
            continue
        applied += 1
    return applied


def _seconds(value: Any, fallback: int) -> int:
    return int(value) if is_safe_integer(value) else fallback
