package verification

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Refusal codes beyond a TokenRejection; the same codes as the Node package's AccessRefusalCode.
const (
	// ErrTokenMissing: neither a Bearer nor a DPoP token.
	ErrTokenMissing = "ERR_TOKEN_MISSING"
	// ErrTokenRevoked: the revocation projection refuses the token.
	ErrTokenRevoked = "ERR_TOKEN_REVOKED"
	// ErrTokenDPoPBound: a DPoP-bound token (cnf.jkt) presented as a bearer token (RFC 9449 section 7.2).
	ErrTokenDPoPBound = "ERR_TOKEN_DPOP_BOUND"
	// ErrTokenNotDPoPBound: the DPoP scheme with a token bound to no key.
	ErrTokenNotDPoPBound = "ERR_TOKEN_NOT_DPOP_BOUND"
	// ErrDPoPProofInvalid: the DPoP header is missing, repeated or invalid, spent before, or signed by another key than the token's.
	ErrDPoPProofInvalid = "ERR_DPOP_PROOF_INVALID"
	// ErrPermissionDenied: a valid token without the required scope (a 403).
	ErrPermissionDenied = "ERR_PERMISSION_DENIED"
)

// DefaultAudience is the audience of Tessera's v5 interface tokens.
const DefaultAudience = "tessera:v5"

var details = map[string]string{
	ErrTokenMissing:      "an Authorization: Bearer token is required",
	ErrTokenMalformed:    "the access token is malformed",
	ErrTokenAlgorithm:    "the access token is invalid",
	ErrTokenUnknownKey:   "the access token is invalid",
	ErrTokenSignature:    "the access token is invalid",
	ErrTokenType:         "the access token is invalid",
	ErrTokenIssuer:       "the access token is invalid",
	ErrTokenAudience:     "the access token is not valid for this interface",
	ErrTokenExpired:      "the access token has expired",
	ErrTokenNotYetValid:  "the access token is not valid yet",
	ErrTokenRevoked:      "the access token was revoked or replaced by a refresh",
	ErrTokenDPoPBound:    "the access token is bound to a DPoP key: present it with the DPoP scheme and a DPoP proof",
	ErrTokenNotDPoPBound: "the access token is not bound to a DPoP key: present it with the Bearer scheme",
}

// Decision is whether a request's token may do an operation. Status is 200, 401 or 403.
type Decision struct {
	Status int
	// Code is empty for a 200.
	Code   string
	Detail string
	// Claims are set for a 200 and a 403.
	Claims *AccessTokenClaims
	// Scope is the permission a valid token lacked (a 403), for the insufficient_scope challenge.
	Scope string
	// DPoP is set when the request presented the DPoP scheme: its challenge is then a DPoP one (RFC 9449 section 7.1).
	DPoP bool
}

// Requirement is what a route asks of a token.
type Requirement struct {
	// Audience this service is; empty means DefaultAudience.
	Audience string
	// Permission is a scope the token must carry; empty when any valid token will do.
	Permission string
}

// PresentedRequest is the request as the client sent it, which a DPoP proof is checked against:
// needed only for the DPoP scheme.
type PresentedRequest struct {
	// Method as the client sent it (upper case).
	Method string
	// URL the client addressed (scheme, host, port, path); the query is ignored.
	URL string
	// DPoP holds the request's DPoP header values: exactly one proof is taken.
	DPoP []string
}

// Config configures a Verifier.
type Config struct {
	// JWKSURL is the issuer's key set, https://<public URL>/.well-known/jwks.json.
	JWKSURL string
	// Issuers are the iss values accepted: TESSERA_ISSUER (default urn:tessera:issuer), and the
	// public URL when tokens from Tessera's OAuth 2.0 endpoints are accepted too.
	Issuers []string
	// Projection is consulted on every decision; nil makes an empty one of its own.
	Projection *RevocationProjection
	// HTTPClient loads the key set; nil means http.DefaultClient.
	HTTPClient *http.Client
	// ClockSkew tolerates another host's clock for iat, nbf and a proof's iat (default 60 s).
	ClockSkew time.Duration
	// KeyRefreshCooldown is the least time between two loads of the key set for an unknown kid
	// (default 5 s, as Tessera's own verifier loads a JWKS).
	KeyRefreshCooldown time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// SpentProofCapacity bounds the DPoP replay cache (default 200,000 proofs).
	SpentProofCapacity int
}

// Verifier decides whether a bearer or DPoP-bound access token may do an operation, in the Node
// verifier's order: header → signature (ES256, known kid) → typ, iss, aud, exp → revocation
// projection → DPoP binding → permission. Safe for concurrent use.
type Verifier struct {
	keys             *KeySet
	projection       *RevocationProjection
	issuers          []string
	clockSkewSeconds int64
	now              func() time.Time
	spent            *spentProofIDs
	refresh          *keyRefresh
	httpClient       *http.Client
	jwksURL          string
}

// NewVerifier makes a verifier; call LoadKeys (or Start) before it takes requests, so that the
// first tokens do not all wait on a key load.
func NewVerifier(config Config) (*Verifier, error) {
	if config.JWKSURL == "" {
		return nil, errors.New("verification: Config.JWKSURL is required")
	}
	if len(config.Issuers) == 0 {
		return nil, errors.New("verification: Config.Issuers names no issuer")
	}
	verifier := &Verifier{
		keys:             NewKeySet(),
		projection:       config.Projection,
		issuers:          append([]string(nil), config.Issuers...),
		clockSkewSeconds: int64(orDefault(config.ClockSkew, 60*time.Second) / time.Second),
		now:              config.Now,
		httpClient:       config.HTTPClient,
		jwksURL:          config.JWKSURL,
	}
	if verifier.projection == nil {
		verifier.projection = NewRevocationProjection(verifier.clockSkewSeconds)
	}
	if verifier.now == nil {
		verifier.now = time.Now
	}
	if verifier.httpClient == nil {
		verifier.httpClient = http.DefaultClient
	}
	capacity := config.SpentProofCapacity
	if capacity <= 0 {
		capacity = 200_000
	}
	verifier.spent = newSpentProofIDs(verifier.clockSkewSeconds, capacity)
	verifier.refresh = newKeyRefresh(verifier.LoadKeys, orDefault(config.KeyRefreshCooldown, 5*time.Second), verifier.now)
	return verifier, nil
}

func orDefault(value, fallback time.Duration) time.Duration {
	if value <= 0 {
		return fallback
	}
	return value
}

// Keys is the verifier's key set: a Shared Signals consumer verifies SETs with the same keys.
func (verifier *Verifier) Keys() *KeySet { return verifier.keys }

// Projection is the revocation projection the verifier consults.
func (verifier *Verifier) Projection() *RevocationProjection { return verifier.projection }

// LoadKeys loads the issuer's key set now.
func (verifier *Verifier) LoadKeys(ctx context.Context) error {
	return LoadJWKS(ctx, verifier.httpClient, verifier.jwksURL, verifier.keys)
}

// RefreshKeys loads the key set again unless a load ran within the cooldown (single-flight).
func (verifier *Verifier) RefreshKeys(ctx context.Context) { verifier.refresh.refresh(ctx) }

// Check decides, and a token signed by an unknown key gets one refresh of the keys first.
func (verifier *Verifier) Check(ctx context.Context, authorization string, requirement Requirement, request *PresentedRequest) Decision {
	decision := verifier.Decide(authorization, requirement, request)
	if decision.Status == http.StatusUnauthorized && decision.Code == ErrTokenUnknownKey {
		verifier.RefreshKeys(ctx)
		return verifier.Decide(authorization, requirement, request)
	}
	return decision
}

// Decide decides from the keys and revocations in memory now.
func (verifier *Verifier) Decide(authorization string, requirement Requirement, request *PresentedRequest) Decision {
	if authorization == "" {
		return Decision{Status: http.StatusUnauthorized, Code: ErrTokenMissing, Detail: details[ErrTokenMissing]}
	}
	dpopScheme := false
	token, isBearer := credentialsOf(authorization, "bearer")
	if !isBearer {
		token, dpopScheme = credentialsOf(authorization, "dpop")
		if !dpopScheme {
			return Decision{Status: http.StatusUnauthorized, Code: ErrTokenMissing, Detail: details[ErrTokenMissing]}
		}
	}
	if token == "" {
		return refused(ErrTokenMalformed, details[ErrTokenMalformed], dpopScheme)
	}
	claims, rejection := verifySignature(token, verifier.keys)
	if rejection != "" {
		return refused(rejection, details[rejection], dpopScheme)
	}
	nowSeconds := verifier.now().Unix()
	audience := requirement.Audience
	if audience == "" {
		audience = DefaultAudience
	}
	if rejection := checkClaims(claims, verifier.issuers, audience, nowSeconds, verifier.clockSkewSeconds); rejection != "" {
		return refused(rejection, details[rejection], dpopScheme)
	}
	if verifier.projection.Refuses(claims) {
		return refused(ErrTokenRevoked, details[ErrTokenRevoked], dpopScheme)
	}
	if !dpopScheme {
		// RFC 9449 section 7.2: a bound token is no bearer token; taken as one, a stolen token would work without its key.
		if claims.Confirmation != nil {
			return refused(ErrTokenDPoPBound, details[ErrTokenDPoPBound], false)
		}
	} else if refusal, refusedByBinding := verifier.checkBinding(claims, nowSeconds, token, request); refusedByBinding {
		return refusal
	}
	if requirement.Permission != "" && !claims.HasScope(requirement.Permission) {
		return Decision{
			Status: http.StatusForbidden, Code: ErrPermissionDenied, Detail: "the account is not permitted to " + requirement.Permission,
			Claims: claims, Scope: requirement.Permission, DPoP: dpopScheme,
		}
	}
	return Decision{Status: http.StatusOK, Claims: claims}
}

// checkBinding is RFC 9449 section 7.1: one proof, for this request and this token, signed by the
// key the token is bound to, never seen before.
func (verifier *Verifier) checkBinding(claims *AccessTokenClaims, nowSeconds int64, token string, request *PresentedRequest) (Decision, bool) {
	if claims.Confirmation == nil {
		return refused(ErrTokenNotDPoPBound, details[ErrTokenNotDPoPBound], true), true
	}
	if request == nil {
		return invalidProof("the request's method and URL are not known here, so no DPoP proof can be checked"), true
	}
	proof, ok := oneProof(request.DPoP)
	if !ok {
		return invalidProof("a DPoP request needs exactly one DPoP header with one proof"), true
	}
	jkt, refusal := checkDPoPProof(proof, dpopCheck{
		method: request.Method, url: request.URL, nowSeconds: nowSeconds, clockSkewSeconds: verifier.clockSkewSeconds,
		accessToken: token, spent: verifier.spent,
	})
	if refusal != "" {
		return invalidProof(refusal), true
	}
	if jkt != claims.Confirmation.KeyThumbprint {
		return invalidProof("the DPoP proof is not signed by the key the access token is bound to"), true
	}
	return Decision{}, false
}

// credentialsOf takes "<scheme> <token>" (the scheme case-insensitively, one or more spaces
// before the token, spaces after it); ok is false for another scheme. A token with whitespace
// inside comes back empty: it is malformed.
func credentialsOf(authorization, scheme string) (token string, ok bool) {
	if len(authorization) < len(scheme) || !strings.EqualFold(authorization[:len(scheme)], scheme) {
		return "", false
	}
	rest := authorization[len(scheme):]
	if rest != "" && rest[0] != ' ' {
		return "", false
	}
	if scheme == "dpop" && len(rest) < 2 {
		// The Node verifier takes "DPoP" as a scheme only when something follows its space.
		return "", false
	}
	token = strings.TrimRight(strings.TrimLeft(rest, " "), " ")
	if strings.ContainsAny(token, " \t\r\n\f\v") {
		return "", true
	}
	return token, true
}

// oneProof is the request's single proof. Several headers, or one holding a comma (how proxies
// join repeated headers, which no compact JWS contains), are refused.
func oneProof(headers []string) (string, bool) {
	if len(headers) != 1 || headers[0] == "" || strings.Contains(headers[0], ",") {
		return "", false
	}
	return headers[0], true
}

func refused(code, detail string, dpopScheme bool) Decision {
	return Decision{Status: http.StatusUnauthorized, Code: code, Detail: detail, DPoP: dpopScheme}
}

// invalidProof names which check failed, never the proof or the token.
func invalidProof(detail string) Decision {
	return Decision{Status: http.StatusUnauthorized, Code: ErrDPoPProofInvalid, Detail: detail, DPoP: true}
}
