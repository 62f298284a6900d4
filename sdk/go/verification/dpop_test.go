package verification

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// signedProof is a DPoP proof signed by sign over the header and claims given.
func signedProof(t *testing.T, header, claims map[string]any, sign func([]byte) []byte) string {
	t.Helper()
	encode := func(value any) string {
		raw, err := json.Marshal(value)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(raw)
	}
	input := encode(header) + "." + encode(claims)
	return input + "." + base64.RawURLEncoding.EncodeToString(sign([]byte(input)))
}

func rsaJWK(key *rsa.PublicKey) map[string]any {
	return map[string]any{"kty": "RSA", "n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()), "e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes())}
}

func TestDPoPProofsOfEveryAllowedAlgorithm(t *testing.T) {
	const now = 1_800_000_000
	claims := map[string]any{"jti": "p1", "htm": "POST", "htu": "https://API.example:443/pay", "iat": now}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	smallRSA, err := rsa.GenerateKey(rand.Reader, 1024) // too small on purpose: it must be refused
	if err != nil {
		t.Fatal(err)
	}
	edPublic, edPrivate, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pkcs1 := func(key *rsa.PrivateKey) func([]byte) []byte {
		return func(input []byte) []byte {
			digest := sha256.Sum256(input)
			signature, _ := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
			return signature
		}
	}
	pss := func(input []byte) []byte {
		digest := sha256.Sum256(input)
		signature, _ := rsa.SignPSS(rand.Reader, rsaKey, crypto.SHA256, digest[:], &rsa.PSSOptions{SaltLength: 32})
		return signature
	}
	edJWK := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": base64.RawURLEncoding.EncodeToString(edPublic)}
	withPrivate := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": edJWK["x"], "d": base64.RawURLEncoding.EncodeToString(edPrivate.Seed())}
	cases := []struct {
		name    string
		header  map[string]any
		sign    func([]byte) []byte
		refusal string
	}{
		{"RS256", map[string]any{"typ": "dpop+jwt", "alg": "RS256", "jwk": rsaJWK(&rsaKey.PublicKey)}, pkcs1(rsaKey), ""},
		{"PS256", map[string]any{"typ": "dpop+jwt", "alg": "PS256", "jwk": rsaJWK(&rsaKey.PublicKey)}, pss, ""},
		{"EdDSA", map[string]any{"typ": "dpop+jwt", "alg": "EdDSA", "jwk": edJWK}, func(input []byte) []byte { return ed25519.Sign(edPrivate, input) }, ""},
		{"PS256 header over a PKCS#1 signature", map[string]any{"typ": "dpop+jwt", "alg": "PS256", "jwk": rsaJWK(&rsaKey.PublicKey)}, pkcs1(rsaKey), "the DPoP proof's signature does not verify"},
		{"an RSA key under 2048 bits", map[string]any{"typ": "dpop+jwt", "alg": "RS256", "jwk": rsaJWK(&smallRSA.PublicKey)}, pkcs1(smallRSA), "the DPoP proof's jwk does not fit its alg"},
		{"a private key in the header", map[string]any{"typ": "dpop+jwt", "alg": "EdDSA", "jwk": withPrivate}, func(input []byte) []byte { return ed25519.Sign(edPrivate, input) }, "the DPoP proof's jwk must be a public key"},
		{"HS256", map[string]any{"typ": "dpop+jwt", "alg": "HS256", "jwk": edJWK}, func([]byte) []byte { return []byte("mac") }, "the DPoP proof's alg must be one of ES256, RS256, PS256, EdDSA"},
		{"an access token's typ", map[string]any{"typ": "at+jwt", "alg": "EdDSA", "jwk": edJWK}, func(input []byte) []byte { return ed25519.Sign(edPrivate, input) }, "the DPoP proof's typ must be dpop+jwt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proof := signedProof(t, c.header, claims, c.sign)
			jkt, refusal := checkDPoPProof(proof, dpopCheck{method: "POST", url: "https://api.example/pay?x=1", nowSeconds: now, clockSkewSeconds: 60, spent: newSpentProofIDs(60, 10)})
			if refusal != c.refusal {
				t.Fatalf("got refusal %q, want %q", refusal, c.refusal)
			}
			if c.refusal == "" && (len(jkt) != 43 || strings.ContainsAny(jkt, "+/=")) {
				t.Fatalf("the thumbprint %q is no base64url SHA-256", jkt)
			}
		})
	}
}

// RFC 7638 section 3.1's example key and its thumbprint.
func TestThumbprintOfRFC7638sExample(t *testing.T) {
	n := "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
	if got := jwkThumbprint([][2]string{{"e", "AQAB"}, {"kty", "RSA"}, {"n", n}}); got != "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs" {
		t.Fatalf("thumbprint %s", got)
	}
}

func TestSpentProofIDsRefuseAReplayAndAnythingAsOldAsAForgottenProof(t *testing.T) {
	spent := newSpentProofIDs(60, 2)
	if !spent.spend("k", "a", 100, 100) || spent.spend("k", "a", 100, 100) {
		t.Fatal("the first use is taken, the replay refused")
	}
	if !spent.spend("k", "b", 101, 101) || !spent.spend("k", "c", 102, 102) {
		t.Fatal("new ids are taken while there is room or an older id can go")
	}
	// "a" (iat 100) was dropped to make room: a proof no newer than it is refused by its age.
	if spent.spend("k", "a", 100, 102) || spent.spend("k", "d", 100, 102) {
		t.Fatal("a proof as old as a forgotten one was taken")
	}
}
