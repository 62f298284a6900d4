package verification

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

type claimsKey struct{}

// ClaimsFrom returns the claims of the token the middleware accepted for this request.
func ClaimsFrom(ctx context.Context) (*AccessTokenClaims, bool) {
	claims, ok := ctx.Value(claimsKey{}).(*AccessTokenClaims)
	return claims, ok
}

// MiddlewareOptions tune Middleware.
type MiddlewareOptions struct {
	// PublicOrigin is scheme://host[:port] as clients address this service, for a DPoP proof's htu
	// behind a proxy. Empty: the request's own scheme (TLS or not) and Host.
	PublicOrigin string
}

// Middleware protects next: a request whose token the verifier refuses is answered 401 or 403 as
// application/problem+json with the RFC 6750 or RFC 9449 WWW-Authenticate challenge; an accepted
// one reaches next with its claims in the context (ClaimsFrom).
func (verifier *Verifier) Middleware(requirement Requirement, options MiddlewareOptions, next http.Handler) http.Handler {
	origin := strings.TrimRight(options.PublicOrigin, "/")
	return http.HandlerFunc(func(writer http.ResponseWriter, request *http.Request) {
		authorization := request.Header.Get("Authorization")
		var presented *PresentedRequest
		if len(authorization) > 5 && strings.EqualFold(authorization[:5], "dpop ") {
			presented = &PresentedRequest{Method: request.Method, URL: addressedURL(request, origin), DPoP: request.Header.Values("DPoP")}
		}
		decision := verifier.Check(request.Context(), authorization, requirement, presented)
		if decision.Status != http.StatusOK {
			WriteRefusal(writer, decision)
			return
		}
		next.ServeHTTP(writer, request.WithContext(context.WithValue(request.Context(), claimsKey{}, decision.Claims)))
	})
}

// addressedURL is the URL the client addressed: the public origin (or the request's scheme and host) and the path.
func addressedURL(request *http.Request, origin string) string {
	if origin == "" {
		scheme := "http"
		if request.TLS != nil {
			scheme = "https"
		}
		origin = scheme + "://" + request.Host
	}
	return origin + request.URL.EscapedPath()
}

// problem is an RFC 9457 problem document, as Tessera's own services answer.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// WriteRefusal answers a refused decision as problem+json with its challenge.
func WriteRefusal(writer http.ResponseWriter, decision Decision) {
	body := problem{Type: "urn:tessera:problem:invalid-token", Title: "Unauthorized", Status: http.StatusUnauthorized, Detail: decision.Detail}
	if decision.Status == http.StatusForbidden {
		body = problem{Type: "urn:tessera:problem:forbidden", Title: "Forbidden", Status: http.StatusForbidden, Detail: decision.Detail}
	}
	writer.Header().Set("WWW-Authenticate", Challenge(decision))
	writer.Header().Set("Content-Type", "application/problem+json")
	writer.Header().Set("Cache-Control", "no-store")
	writer.WriteHeader(body.Status)
	_ = json.NewEncoder(writer).Encode(body) // the client may have gone; nothing to do about it
}

// Challenge is the WWW-Authenticate value for a refused decision: RFC 6750's for a bearer token
// (invalid_token; insufficient_scope with the permission a valid token lacked), RFC 9449 section
// 7.1's for the DPoP scheme (invalid_dpop_proof for its proof, and the algorithms taken). A request
// with no credentials is told both schemes; a DPoP-bound token presented as a bearer token is
// told invalid_token and that DPoP is the way. The same values as the Node package.
func Challenge(decision Decision) string {
	algs := `algs="` + strings.Join(DPoPSigningAlgorithms, " ") + `"`
	if decision.DPoP {
		if decision.Status == http.StatusForbidden {
			return `DPoP error="insufficient_scope", scope=` + quoted(decision.Scope) + ", " + algs
		}
		errorCode := "invalid_token"
		if decision.Code == ErrDPoPProofInvalid {
			errorCode = "invalid_dpop_proof"
		}
		return `DPoP error="` + errorCode + `", error_description=` + quoted(decision.Detail) + ", " + algs
	}
	if decision.Status == http.StatusForbidden {
		return `Bearer error="insufficient_scope", scope=` + quoted(decision.Scope)
	}
	switch decision.Code {
	case ErrTokenMissing:
		return "Bearer, DPoP " + algs
	case ErrTokenDPoPBound:
		return `Bearer error="invalid_token", DPoP ` + algs
	}
	return `Bearer error="invalid_token"`
}

// quoted is an RFC 9110 quoted-string: backslash and quote escaped, characters outside tab and
// printable ASCII dropped, so a route's scope cannot break the header.
func quoted(value string) string {
	var out strings.Builder
	out.WriteByte('"')
	for _, character := range value {
		switch {
		case character == '\\' || character == '"':
			out.WriteByte('\\')
			out.WriteRune(character)
		case character == '\t' || character >= 0x20 && character <= 0x7e:
			out.WriteRune(character)
		}
	}
	out.WriteByte('"')
	return out.String()
}
