"""Whether a request's Tessera access token may do an operation, in the Node verifier's order:
header → signature (ES256, known kid) → typ, iss, aud, exp/iat/nbf → revocations → the DPoP
binding → permission. Everything is in memory, so a decision costs one signature check (two with
a DPoP proof) and no call to Tessera."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Union

from jwt.algorithms import ECAlgorithm

from .access_refusal import AccessDecision
from .compact_jws import canonical_signature, is_safe_integer, json_object_of, split_compact
from .dpop_proof import DpopProofRefused, SpentProofIds, check_dpop_proof
from .issuer_keys import IssuerKeys
from .revocation_projection import RevocationProjection

#: The default audience of each interface: a token of one is refused by the other.
AUDIENCES = {"v5": "tessera:v5", "v1": "tessera:v1"}

_access_token_type = "at+jwt"
_max_token_length = 4096
# fullmatch, never `$`: it would let a trailing newline through, which the Node verifier refuses.
_bearer = re.compile(r"bearer +([^\s]+) *", re.IGNORECASE)
_dpop = re.compile(r"dpop +([^\s]+) *", re.IGNORECASE)
_es256 = ECAlgorithm(ECAlgorithm.SHA256)

_details = {
    "ERR_TOKEN_MISSING": "an Authorization: Bearer token is required",
    "ERR_TOKEN_MALFORMED": "the access token is malformed",
    "ERR_TOKEN_ALGORITHM": "the access token is invalid",
    "ERR_TOKEN_UNKNOWN_KEY": "the access token is invalid",
    "ERR_TOKEN_SIGNATURE": "the access token is invalid",
    "ERR_TOKEN_TYPE": "the access token is invalid",
    "ERR_TOKEN_ISSUER": "the access token is invalid",
    "ERR_TOKEN_AUDIENCE": "the access token is not valid for this interface",
    "ERR_TOKEN_EXPIRED": "the access token has expired",
    "ERR_TOKEN_NOT_YET_VALID": "the access token is not valid yet",
    "ERR_TOKEN_REVOKED": "the access token was revoked or replaced by a refresh",
    "ERR_TOKEN_DPOP_BOUND": "the access token is bound to a DPoP key: present it with the DPoP scheme and a DPoP proof",
    "ERR_TOKEN_NOT_DPOP_BOUND": "the access token is not bound to a DPoP key: present it with the Bearer scheme",
}


@dataclass(frozen=True)
class Requirement:
    """What an operation needs: the interface (`v5` or `v1`), a scope word the token must carry
    (None: any valid token), and the audience this service is when it is not the interface's
    default (an RFC 8707 resource)."""

    interface: str = "v5"
    permission: Optional[str] = None
    audience: Optional[str] = None


@dataclass(frozen=True)
class PresentedRequest:
    """The request as the client sent it, which a DPoP proof is checked against: the method (upper
    case), the absolute URL the client addressed (the query is ignored), and the DPoP header(s)."""

    method: str
    url: str
    dpop: Union[str, Sequence[str], None] = None


class _Refusal(Exception):
    def __init__(self, code: str, detail: Optional[str] = None) -> None:
        super().__init__(code)
        self.code = code
        self.detail = detail if detail is not None else _details[code]


class AccessTokenVerifier:
    """Decides requests from the issuer's keys and a revocation projection.

    `issuer` is the `iss` accepted: Tessera's TESSERA_ISSUER, and its public URL when tokens from its
    OAuth 2.0 endpoints are accepted too (one string or several).
    """

    def __init__(
        self,
        keys: IssuerKeys,
        issuer: Union[str, Iterable[str]],
        *,
        projection: Optional[RevocationProjection] = None,
        clock_skew_seconds: int = 60,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.keys = keys
        self.issuers = frozenset([issuer] if isinstance(issuer, str) else issuer)
        self.projection = projection if projection is not None else RevocationProjection(clock_skew_seconds=clock_skew_seconds)
        self.clock_skew_seconds = clock_skew_seconds
        self._now = now
        # This verifier's spent proofs: a proof replayed at another process is not seen there.
        self._spent_proof_ids = SpentProofIds(clock_skew_seconds=clock_skew_seconds)

    def check(self, authorization: Optional[str], requirement: Requirement = Requirement(), request: Optional[PresentedRequest] = None) -> AccessDecision:
        """The decision for a request's `Authorization` header; a token signed by an unknown kid gets
        one (rate-limited) look at the JWKS first."""
        if authorization is None:
            return AccessDecision(401, code="ERR_TOKEN_MISSING", detail=_details["ERR_TOKEN_MISSING"])
        if _has_bearer_scheme(authorization):
            found = _bearer.fullmatch(authorization)
            return self._decide(found.group(1) if found else None, requirement, None)
        if _has_dpop_scheme(authorization):
            found = _dpop.fullmatch(authorization)
            return self._decide(found.group(1) if found else None, requirement, request or _no_request)
        return AccessDecision(401, code="ERR_TOKEN_MISSING", detail=_details["ERR_TOKEN_MISSING"])

    def _decide(self, token: Optional[str], requirement: Requirement, request: Optional[PresentedRequest]) -> AccessDecision:
        scheme = "DPoP" if request is not None else None
        now = int(self._now())
        try:
            if not token:
                raise _Refusal("ERR_TOKEN_MALFORMED")
            claims = self._verified_claims(token)
            self._check_claims(claims, requirement, now)
            self._check_revocations(claims)
            if request is None:
                # RFC 9449 section 7.2: a bound token is no bearer token; taken as one, a stolen token would work without its key.
                if claims.get("cnf") is not None:
                    return AccessDecision(401, code="ERR_TOKEN_DPOP_BOUND", detail=_details["ERR_TOKEN_DPOP_BOUND"])
            else:
                self._check_binding(claims, token, request, now)
        except _Refusal as refusal:
            return AccessDecision(401, code=refusal.code, detail=refusal.detail, scheme=scheme)
        permission = requirement.permission
        if permission is not None and permission not in claims["scope"].split(" "):
            return AccessDecision(403, claims=claims, code="ERR_PERMISSION_DENIED", detail=f"the account is not permitted to {permission}", scope=permission, scheme=scheme)
        return AccessDecision(200, claims=claims)

    def _verified_claims(self, token: str) -> Dict[str, Any]:
        """Header, signature (ES256, known kid), typ and claim types."""
        segments = split_compact(token) if len(token) <= _max_token_length else None
        header = json_object_of(segments[0]) if segments else None
        if segments is None or header is None:
            raise _Refusal("ERR_TOKEN_MALFORMED")
        encoded_header, encoded_payload, encoded_signature = segments
        # Only ES256: `none`, HS256-with-the-public-key and algorithm confusion die here.
        if header.get("alg") != "ES256":
            raise _Refusal("ERR_TOKEN_ALGORITHM")
        kid = header.get("kid")
        if not isinstance(kid, str):
            raise _Refusal("ERR_TOKEN_UNKNOWN_KEY")
        if any(member in header for member in ("crit", "jwk", "jku", "x5u")):
            raise _Refusal("ERR_TOKEN_MALFORMED")
        key = self.keys.find_or_refresh(kid)
        if key is None:
            raise _Refusal("ERR_TOKEN_UNKNOWN_KEY")
        signature = canonical_signature(encoded_signature)
        if signature is None or len(signature) != 64:
            raise _Refusal("ERR_TOKEN_SIGNATURE")
        try:
            valid = _es256.verify(f"{encoded_header}.{encoded_payload}".encode("ascii"), key, signature)
        except Exception:  # cryptography's errors for a signature that cannot be one
            valid = False
        if not valid:
            raise _Refusal("ERR_TOKEN_SIGNATURE")
        typ = header.get("typ")
        typ = typ.lower() if isinstance(typ, str) else ""
        if typ not in (_access_token_type, f"application/{_access_token_type}"):
            raise _Refusal("ERR_TOKEN_TYPE")
        claims = json_object_of(encoded_payload)
        if claims is None or not _has_claim_types(claims):
            raise _Refusal("ERR_TOKEN_MALFORMED")
        return claims

    def _check_claims(self, claims: Dict[str, Any], requirement: Requirement, now: int) -> None:
        if claims["iss"] not in self.issuers:
            raise _Refusal("ERR_TOKEN_ISSUER")
        audience = requirement.audience if requirement.audience is not None else AUDIENCES.get(requirement.interface)
        if claims["aud"] != audience:
            raise _Refusal("ERR_TOKEN_AUDIENCE")
        # Expiry gets no skew; a start slightly in the future (another host's clock) does.
        if now >= claims["exp"]:
            raise _Refusal("ERR_TOKEN_EXPIRED")
        latest_start = now + self.clock_skew_seconds
        if claims["iat"] > latest_start or (claims.get("nbf") is not None and claims["nbf"] > latest_start):
            raise _Refusal("ERR_TOKEN_NOT_YET_VALID")

    def _check_revocations(self, claims: Dict[str, Any]) -> None:
        family = claims.get("fid")
        if family is not None and self.projection.is_rejected(family, int(claims.get("gen") or 0)):
            raise _Refusal("ERR_TOKEN_REVOKED")
        if self.projection.is_cut_off(claims["sub"], claims["client_id"], int(claims["iat"])):
            raise _Refusal("ERR_TOKEN_REVOKED")

    def _check_binding(self, claims: Dict[str, Any], token: str, request: PresentedRequest, now: int) -> None:
        """RFC 9449 section 7.1: one proof, for this request and this token, signed by the key the token is bound to, never seen before."""
        confirmation = claims.get("cnf")
        if confirmation is None:
            raise _Refusal("ERR_TOKEN_NOT_DPOP_BOUND")
        if request is _no_request:
            raise _Refusal("ERR_DPOP_PROOF_INVALID", "the request's method and URL are not known here, so no DPoP proof can be checked")
        proof = _one_proof(request.dpop)
        if proof is None:
            raise _Refusal("ERR_DPOP_PROOF_INVALID", "a DPoP request needs exactly one DPoP header with one proof")
        try:
            jkt = check_dpop_proof(proof, method=request.method, url=request.url, now=now, clock_skew_seconds=self.clock_skew_seconds, spent_ids=self._spent_proof_ids, access_token=token)
        except DpopProofRefused as refused:
            raise _Refusal("ERR_DPOP_PROOF_INVALID", str(refused)) from None
        if jkt != confirmation["jkt"]:
            raise _Refusal("ERR_DPOP_PROOF_INVALID", "the DPoP proof is not signed by the key the access token is bound to")


# The DPoP scheme without a PresentedRequest: no proof can be checked.
_no_request = PresentedRequest(method="", url="")


def _has_bearer_scheme(authorization: str) -> bool:
    """The scheme alone, case-insensitively: "Bearer" then a space or the end (RFC 6750 3.1)."""
    return authorization[:6].lower() == "bearer" and (len(authorization) == 6 or authorization[6] == " ")


def _has_dpop_scheme(authorization: str) -> bool:
    return len(authorization) > 5 and authorization[4] == " " and authorization[:4].lower() == "dpop"


def _one_proof(header: Union[str, Sequence[str], None]) -> Optional[str]:
    """The one proof of a request: repeated headers arrive as a list, or joined with ", " (no compact JWS holds a comma)."""
    if isinstance(header, str):
        proof: Optional[str] = header
    elif header is not None and len(header) == 1:
        proof = header[0]
    else:
        proof = None
    return None if not proof or "," in proof else proof


def _has_claim_types(claims: Dict[str, Any]) -> bool:
    confirmation = claims.get("cnf")
    return (
        all(isinstance(claims.get(name), str) for name in ("iss", "sub", "aud", "client_id", "jti", "scope"))
        and is_safe_integer(claims.get("iat"))
        and is_safe_integer(claims.get("exp"))
        and ("nbf" not in claims or is_safe_integer(claims["nbf"]))
        and ("fid" not in claims or isinstance(claims["fid"], str))
        and ("gen" not in claims or is_safe_integer(claims["gen"]))
        and ("cnf" not in claims or (isinstance(confirmation, dict) and isinstance(confirmation.get("jkt"), str)))
    )
