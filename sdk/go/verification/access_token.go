package verification

import (
	"encoding/base64"
	"slices"
	"strings"
)

// AccessTokenClaims are an RFC 9068 access token's claims plus Tessera's family bookkeeping.
type AccessTokenClaims struct {
	Issuer    string `json:"iss"`
	Subject   string `json:"sub"` // the account id
	Audience  string `json:"aud"`
	ClientID  string `json:"client_id"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp"`
	ID        string `json:"jti"`
	Scope     string `json:"scope"`
	// NotBefore is 0 when absent: Tessera does not set it; it is honoured when present.
	NotBefore int64 `json:"nbf,omitempty"`
	// FamilyID is one get-oauth-token exchange and every refresh after it; empty on v1 tokens.
	FamilyID string `json:"fid,omitempty"`
	// Generation within the family; 0 on v1 tokens.
	Generation int64 `json:"gen,omitempty"`
	// Confirmation is cnf (RFC 9449 section 6.1): the token is taken only with the DPoP scheme and
	// a proof signed by the key whose thumbprint is cnf.jkt. Nil for a bearer token.
	Confirmation *Confirmation `json:"cnf,omitempty"`
}

// Confirmation is an access token's cnf claim.
type Confirmation struct {
	// KeyThumbprint is jkt, the RFC 7638 thumbprint of the key the token is bound to.
	KeyThumbprint string `json:"jkt"`
}

// HasScope reports whether the space-separated scope names the permission as one of its words.
func (claims *AccessTokenClaims) HasScope(permission string) bool {
	return slices.Contains(strings.Split(claims.Scope, " "), permission)
}

// TokenRejection names why a token itself was refused; the same codes as @tessera/tokens.
type TokenRejection = string

const (
	ErrTokenMalformed   TokenRejection = "ERR_TOKEN_MALFORMED"
	ErrTokenAlgorithm   TokenRejection = "ERR_TOKEN_ALGORITHM"
	ErrTokenUnknownKey  TokenRejection = "ERR_TOKEN_UNKNOWN_KEY"
	ErrTokenSignature   TokenRejection = "ERR_TOKEN_SIGNATURE"
	ErrTokenType        TokenRejection = "ERR_TOKEN_TYPE"
	ErrTokenIssuer      TokenRejection = "ERR_TOKEN_ISSUER"
	ErrTokenAudience    TokenRejection = "ERR_TOKEN_AUDIENCE"
	ErrTokenExpired     TokenRejection = "ERR_TOKEN_EXPIRED"
	ErrTokenNotYetValid TokenRejection = "ERR_TOKEN_NOT_YET_VALID"
)

const (
	accessTokenType = "at+jwt"
	maxTokenLength  = 4096
)

// verifySignature checks everything that does not depend on the request or the time: header,
// signature (ES256 only, a known kid), typ and the claims' types, in the Node verifier's order,
// so that the same token gets the same code.
func verifySignature(token string, keys *KeySet) (*AccessTokenClaims, TokenRejection) {
	if len(token) > maxTokenLength {
		return nil, ErrTokenMalformed
	}
	jws, ok := splitCompact(token)
	if !ok {
		return nil, ErrTokenMalformed
	}
	header, ok := parseJSONObject(jws.encodedHeader)
	if !ok {
		return nil, ErrTokenMalformed
	}
	// Only ES256: `none`, HS256-with-the-public-key and algorithm confusion die here.
	if alg, _ := header.str("alg"); alg != "ES256" {
		return nil, ErrTokenAlgorithm
	}
	kid, ok := header.str("kid")
	if !ok {
		return nil, ErrTokenUnknownKey
	}
	// Members that would let the token choose its own key or semantics are refused outright.
	if header.has("crit") || header.has("jwk") || header.has("jku") || header.has("x5u") {
		return nil, ErrTokenMalformed
	}
	key, ok := keys.Find(kid)
	if !ok {
		return nil, ErrTokenUnknownKey
	}
	signature, ok := decodeBase64url(jws.encodedSignature)
	if !ok || len(signature) != 64 {
		return nil, ErrTokenSignature
	}
	// Only the canonical spelling of the signature is taken: a token has exactly one spelling.
	if base64.RawURLEncoding.EncodeToString(signature) != jws.encodedSignature {
		return nil, ErrTokenSignature
	}
	if !verifyES256(key, jws.signingInput(), signature) {
		return nil, ErrTokenSignature
	}
	typ, _ := header.str("typ")
	typ = strings.ToLower(typ)
	if typ != accessTokenType && typ != "application/"+accessTokenType {
		return nil, ErrTokenType
	}
	payload, ok := parseJSONObject(jws.encodedPayload)
	if !ok {
		return nil, ErrTokenMalformed
	}
	claims, ok := accessTokenClaimsOf(payload)
	if !ok {
		return nil, ErrTokenMalformed
	}
	return claims, ""
}

// accessTokenClaimsOf reads the claims with their types checked: a claim of the wrong type makes
// the token malformed rather than being read as its zero value.
func accessTokenClaimsOf(payload jsonObject) (*AccessTokenClaims, bool) {
	var claims AccessTokenClaims
	var ok [8]bool
	claims.Issuer, ok[0] = payload.str("iss")
	claims.Subject, ok[1] = payload.str("sub")
	claims.Audience, ok[2] = payload.str("aud")
	claims.ClientID, ok[3] = payload.str("client_id")
	claims.IssuedAt, ok[4] = payload.safeInteger("iat")
	claims.ExpiresAt, ok[5] = payload.safeInteger("exp")
	claims.ID, ok[6] = payload.str("jti")
	claims.Scope, ok[7] = payload.str("scope")
	for _, present := range ok {
		if !present {
			return nil, false
		}
	}
	if payload.has("nbf") {
		nbf, isInteger := payload.safeInteger("nbf")
		if !isInteger {
			return nil, false
		}
		claims.NotBefore = nbf
	}
	if payload.has("fid") {
		fid, isString := payload.str("fid")
		if !isString {
			return nil, false
		}
		claims.FamilyID = fid
	}
	if payload.has("gen") {
		gen, isInteger := payload.safeInteger("gen")
		if !isInteger {
			return nil, false
		}
		claims.Generation = gen
	}
	if payload.has("cnf") {
		cnf, isObject := payload.object("cnf")
		if !isObject {
			return nil, false
		}
		jkt, isString := cnf.str("jkt")
		if !isString {
			return nil, false
		}
		claims.Confirmation = &Confirmation{KeyThumbprint: jkt}
	}
	return &claims, true
}

// hasNotBefore is whether the token carried nbf: a zero value is read as absent, since no token is valid only from 1970.
func (claims *AccessTokenClaims) hasNotBefore() bool { return claims.NotBefore != 0 }

// checkClaims does the per-request checks: issuer, audience, expiry (no skew), and not yet valid
// (iat, and nbf when present, with the skew for another host's clock).
func checkClaims(claims *AccessTokenClaims, issuers []string, audience string, nowSeconds, clockSkewSeconds int64) TokenRejection {
	if !slices.Contains(issuers, claims.Issuer) {
		return ErrTokenIssuer
	}
	if claims.Audience != audience {
		return ErrTokenAudience
	}
	if nowSeconds >= claims.ExpiresAt {
		return ErrTokenExpired
	}
	latestStart := nowSeconds + clockSkewSeconds
	if claims.IssuedAt > latestStart || claims.hasNotBefore() && claims.NotBefore > latestStart {
		return ErrTokenNotYetValid
	}
	return ""
}
