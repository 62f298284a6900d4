package verification

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const testTokenIssuer = "urn:tessera:issuer"

func tokenClaims(now time.Time, extra map[string]any) map[string]any {
	claims := map[string]any{
		"iss": testTokenIssuer, "sub": "acc_1", "aud": DefaultAudience, "client_id": "tsl_1",
		"iat": now.Unix() - 10, "exp": now.Unix() + 900, "jti": "at_1", "scope": "orders:read", "fid": "fam_1", "gen": 0,
	}
	for name, value := range extra {
		claims[name] = value
	}
	return claims
}

func newTestVerifier(t *testing.T, issuer *testIssuer, now time.Time) *Verifier {
	t.Helper()
	verifier, err := NewVerifier(Config{JWKSURL: issuer.jwksURL(), Issuers: []string{testTokenIssuer}, HTTPClient: issuer.server.Client(), Now: func() time.Time { return now }, KeyRefreshCooldown: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return verifier
}

func TestAnUnknownKidRefreshesTheKeysOncePerCooldown(t *testing.T) {
	issuer := newTestIssuer(t)
	issuer.publishKey.Store(false)
	now := time.Unix(1_800_000_000, 0)
	verifier := newTestVerifier(t, issuer, now)
	if err := verifier.LoadKeys(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The key is published after the verifier loaded the set: as after `tessera keys rotate`.
	issuer.publishKey.Store(true)
	token := issuer.accessToken(t, tokenClaims(now, nil))
	if decision := verifier.Check(context.Background(), "Bearer "+token, Requirement{}, nil); decision.Status != 200 {
		t.Fatalf("a token of a newly published key: %+v", decision)
	}
	loads := issuer.jwksLoads.Load()
	forged := signES256(t, issuer.key, map[string]string{"alg": "ES256", "typ": "at+jwt", "kid": "forged"}, tokenClaims(now, nil))
	for range 20 {
		if decision := verifier.Check(context.Background(), "Bearer "+forged, Requirement{}, nil); decision.Code != ErrTokenUnknownKey {
			t.Fatalf("a forged kid: %+v", decision)
		}
	}
	if extra := issuer.jwksLoads.Load() - loads; extra != 0 {
		t.Fatalf("forged kids within the cooldown loaded the JWKS %d more times", extra)
	}
}

func TestADPoPProofIsTakenOnce(t *testing.T) {
	issuer := newTestIssuer(t)
	now := time.Unix(1_800_000_000, 0)
	verifier := newTestVerifier(t, issuer, now)
	if err := verifier.LoadKeys(context.Background()); err != nil {
		t.Fatal(err)
	}
	client, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwk := publicJWK(&client.PublicKey, "")
	jkt := jwkThumbprint([][2]string{{"crv", jwk["crv"]}, {"kty", jwk["kty"]}, {"x", jwk["x"]}, {"y", jwk["y"]}})
	token := issuer.accessToken(t, tokenClaims(now, map[string]any{"cnf": map[string]string{"jkt": jkt}}))
	proof := signES256(t, client, map[string]any{"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk},
		map[string]any{"jti": "proof-1", "htm": "GET", "htu": "https://api.example/orders", "iat": now.Unix(), "ath": accessTokenHash(token)})
	request := &PresentedRequest{Method: "GET", URL: "https://api.example/orders?page=2", DPoP: []string{proof}}
	if decision := verifier.Check(context.Background(), "DPoP "+token, Requirement{Permission: "orders:read"}, request); decision.Status != 200 {
		t.Fatalf("the first use: %+v", decision)
	}
	replayed := verifier.Check(context.Background(), "DPoP "+token, Requirement{Permission: "orders:read"}, request)
	if replayed.Status != 401 || replayed.Code != ErrDPoPProofInvalid || Challenge(replayed) != `DPoP error="invalid_dpop_proof", error_description="the DPoP proof was used before (its jti is single use)", algs="ES256 RS256 PS256 EdDSA"` {
		t.Fatalf("the replay: %+v %s", replayed, Challenge(replayed))
	}
}

func TestMiddlewareAnswersWithTheChallengeAndPassesTheClaims(t *testing.T) {
	issuer := newTestIssuer(t)
	now := time.Now()
	verifier, err := NewVerifier(Config{JWKSURL: issuer.jwksURL(), Issuers: []string{testTokenIssuer}, HTTPClient: issuer.server.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if err := verifier.LoadKeys(context.Background()); err != nil {
		t.Fatal(err)
	}
	protected := verifier.Middleware(Requirement{Permission: "orders:write"}, MiddlewareOptions{}, http.HandlerFunc(func(writer http.ResponseWriter, request *http.Request) {
		claims, _ := ClaimsFrom(request.Context())
		_, _ = writer.Write([]byte(claims.Subject))
	}))
	server := httptest.NewServer(protected)
	defer server.Close()
	get := func(authorization string) (*http.Response, string) {
		request, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, server.URL+"/orders", nil)
		if authorization != "" {
			request.Header.Set("Authorization", authorization)
		}
		response, err := server.Client().Do(request)
		if err != nil {
			t.Fatal(err)
		}
		defer response.Body.Close()
		var body strings.Builder
		buffer := make([]byte, 4096)
		for {
			n, readErr := response.Body.Read(buffer)
			body.Write(buffer[:n])
			if readErr != nil {
				break
			}
		}
		return response, body.String()
	}

	response, _ := get("")
	if response.StatusCode != 401 || response.Header.Get("WWW-Authenticate") != `Bearer, DPoP algs="ES256 RS256 PS256 EdDSA"` {
		t.Fatalf("no credentials: %d %q", response.StatusCode, response.Header.Get("WWW-Authenticate"))
	}
	reader := issuer.accessToken(t, tokenClaims(now, nil))
	response, body := get("Bearer " + reader)
	var problemBody problem
	_ = json.Unmarshal([]byte(body), &problemBody)
	if response.StatusCode != 403 || response.Header.Get("WWW-Authenticate") != `Bearer error="insufficient_scope", scope="orders:write"` ||
		response.Header.Get("Content-Type") != "application/problem+json" || problemBody.Type != "urn:tessera:problem:forbidden" {
		t.Fatalf("a token without the permission: %d %q %s", response.StatusCode, response.Header.Get("WWW-Authenticate"), body)
	}
	writer := issuer.accessToken(t, tokenClaims(now, map[string]any{"scope": "orders:read orders:write"}))
	if response, body := get("Bearer " + writer); response.StatusCode != 200 || body != "acc_1" {
		t.Fatalf("a token with the permission: %d %s", response.StatusCode, body)
	}
	verifier.Projection().Apply(AccountTokensRevoked{AccountID: "acc_1", NotBefore: now.Unix(), RejectsUntil: now.Unix() + 900})
	if response, _ := get("Bearer " + writer); response.StatusCode != 401 || response.Header.Get("WWW-Authenticate") != `Bearer error="invalid_token"` {
		t.Fatalf("a token of a cut account: %d %q", response.StatusCode, response.Header.Get("WWW-Authenticate"))
	}
}
