package verification

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// testIssuer signs tokens and SETs the way Tessera does, and serves its JWKS over HTTP.
type testIssuer struct {
	key        *ecdsa.PrivateKey
	kid        string
	server     *httptest.Server
	jwksLoads  atomic.Int32
	publishKey atomic.Bool
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	issuer := &testIssuer{key: key, kid: "kid-test-1"}
	issuer.publishKey.Store(true)
	issuer.server = httptest.NewServer(http.HandlerFunc(func(writer http.ResponseWriter, _ *http.Request) {
		issuer.jwksLoads.Add(1)
		keys := []map[string]string{}
		if issuer.publishKey.Load() {
			keys = append(keys, publicJWK(&key.PublicKey, issuer.kid))
		}
		writer.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(writer).Encode(map[string]any{"keys": keys})
	}))
	t.Cleanup(issuer.server.Close)
	return issuer
}

func (issuer *testIssuer) jwksURL() string { return issuer.server.URL + "/.well-known/jwks.json" }

func publicJWK(key *ecdsa.PublicKey, kid string) map[string]string {
	point, _ := key.Bytes() // a P-256 public key always encodes
	jwk := map[string]string{
		"kty": "EC", "crv": "P-256",
		"x": base64.RawURLEncoding.EncodeToString(point[1:33]),
		"y": base64.RawURLEncoding.EncodeToString(point[33:]),
	}
	if kid != "" {
		jwk["kid"] = kid
	}
	return jwk
}

// signES256 makes a compact JWS of header and claims with key.
func signES256(t *testing.T, key *ecdsa.PrivateKey, header, claims any) string {
	t.Helper()
	encode := func(value any) string {
		raw, err := json.Marshal(value)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(raw)
	}
	input := encode(header) + "." + encode(claims)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	signature := make([]byte, 64)
	r.FillBytes(signature[:32])
	s.FillBytes(signature[32:])
	return input + "." + base64.RawURLEncoding.EncodeToString(signature)
}

func (issuer *testIssuer) accessToken(t *testing.T, claims map[string]any) string {
	return signES256(t, issuer.key, map[string]string{"alg": "ES256", "typ": "at+jwt", "kid": issuer.kid}, claims)
}

func (issuer *testIssuer) set(t *testing.T, claims map[string]any) string {
	return signES256(t, issuer.key, map[string]string{"alg": "ES256", "typ": "secevent+jwt", "kid": issuer.kid}, claims)
}
