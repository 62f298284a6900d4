package verification

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"strings"
	"sync"
)

// DPoPSigningAlgorithms are the algorithms a DPoP proof may be signed with: asymmetric only (RFC 9449 section 4.2).
var DPoPSigningAlgorithms = []string{"ES256", "RS256", "PS256", "EdDSA"}

const (
	// dpopProofLifetimeSeconds is how long after its iat a proof is taken (plus the clock skew).
	dpopProofLifetimeSeconds = 60
	maxProofLength           = 4096
	maxProofJTILength        = 128
)

// presentedProofKey is a proof header's algorithm, public key and RFC 7638 thumbprint.
type presentedProofKey struct {
	alg string
	key crypto.PublicKey
	jkt string
}

// dpopCheck is what a proof is checked against (RFC 9449 section 4.3).
type dpopCheck struct {
	method           string
	url              string
	nowSeconds       int64
	clockSkewSeconds int64
	accessToken      string
	spent            *spentProofIDs
}

// checkDPoPProof checks one proof: typ dpop+jwt, an allowed algorithm, a public jwk whose
// signature verifies, htm and htu of this request, an iat inside the window, ath of the presented
// token, and a jti not spent before. It returns the key's thumbprint, or which check failed.
func checkDPoPProof(proof string, check dpopCheck) (jkt string, refusal string) {
	if len(proof) > maxProofLength {
		return "", "the DPoP proof is too long"
	}
	jws, ok := splitCompact(proof)
	if !ok {
		return "", "the DPoP proof is not a compact JWS"
	}
	proofKey, refusal := proofKeyOf(jws.encodedHeader)
	if refusal != "" {
		return "", refusal
	}
	signature, ok := decodeBase64url(jws.encodedSignature)
	if !ok || !signatureVerifies(proofKey, jws.signingInput(), signature) {
		return "", "the DPoP proof's signature does not verify"
	}
	claims, ok := parseJSONObject(jws.encodedPayload)
	if !ok {
		return "", "the DPoP proof's claims are not a JSON object"
	}
	jti, ok := claims.str("jti")
	if !ok || jti == "" || len([]rune(jti)) > maxProofJTILength {
		return "", fmt.Sprintf("the DPoP proof's jti must be a string of 1 to %d characters", maxProofJTILength)
	}
	if htm, ok := claims.str("htm"); !ok || htm != check.method {
		return "", "the DPoP proof's htm is not this request's method"
	}
	if htu, ok := claims.str("htu"); !ok || !sameTarget(htu, check.url) {
		return "", "the DPoP proof's htu is not this request's URL"
	}
	iat, ok := claims.number("iat")
	if !ok {
		return "", "the DPoP proof has no iat"
	}
	now := float64(check.nowSeconds)
	if iat > now+float64(check.clockSkewSeconds) || iat < now-dpopProofLifetimeSeconds-float64(check.clockSkewSeconds) {
		return "", "the DPoP proof's iat is outside the accepted window"
	}
	if check.accessToken != "" {
		if ath, ok := claims.str("ath"); !ok || ath != accessTokenHash(check.accessToken) {
			return "", "the DPoP proof's ath does not match the access token"
		}
	}
	// Last, so that a proof refused for another reason spends nothing.
	if !check.spent.spend(proofKey.jkt, jti, int64(iat), check.nowSeconds) {
		return "", "the DPoP proof was used before (its jti is single use)"
	}
	return proofKey.jkt, ""
}

// privateJWKMembers are the members of a private or symmetric key: a proof's jwk must hold none.
var privateJWKMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

func proofKeyOf(encodedHeader string) (presentedProofKey, string) {
	header, ok := parseJSONObject(encodedHeader)
	if typ, _ := header.str("typ"); !ok || typ != "dpop+jwt" {
		return presentedProofKey{}, "the DPoP proof's typ must be dpop+jwt"
	}
	alg, _ := header.str("alg")
	if !isDPoPAlgorithm(alg) {
		return presentedProofKey{}, "the DPoP proof's alg must be one of " + strings.Join(DPoPSigningAlgorithms, ", ")
	}
	jwk, ok := header.object("jwk")
	if ok {
		for _, member := range privateJWKMembers {
			ok = ok && !jwk.has(member)
		}
	}
	if !ok {
		return presentedProofKey{}, "the DPoP proof's jwk must be a public key"
	}
	key, jkt, ok := publicKeyOf(jwk, alg)
	if !ok {
		return presentedProofKey{}, "the DPoP proof's jwk does not fit its alg"
	}
	return presentedProofKey{alg: alg, key: key, jkt: jkt}, ""
}

func isDPoPAlgorithm(alg string) bool {
	for _, allowed := range DPoPSigningAlgorithms {
		if alg == allowed {
			return true
		}
	}
	return false
}

// publicKeyOf builds the key a JWK describes, if it fits the algorithm, with its RFC 7638 thumbprint.
func publicKeyOf(jwk jsonObject, alg string) (crypto.PublicKey, string, bool) {
	kty, _ := jwk.str("kty")
	crv, _ := jwk.str("crv")
	switch {
	case alg == "ES256" && kty == "EC" && crv == "P-256":
		x, okX := jwk.str("x")
		y, okY := jwk.str("y")
		if !okX || !okY {
			return nil, "", false
		}
		key, err := p256Key(x, y)
		if err != nil {
			return nil, "", false
		}
		return key, jwkThumbprint([][2]string{{"crv", crv}, {"kty", kty}, {"x", x}, {"y", y}}), true
	case alg == "EdDSA" && kty == "OKP" && crv == "Ed25519":
		x, okX := jwk.str("x")
		raw, okRaw := decodeBase64url(x)
		if !okX || !okRaw || len(raw) != ed25519.PublicKeySize {
			return nil, "", false
		}
		return ed25519.PublicKey(raw), jwkThumbprint([][2]string{{"crv", crv}, {"kty", kty}, {"x", x}}), true
	case (alg == "RS256" || alg == "PS256") && kty == "RSA":
		n, okN := jwk.str("n")
		e, okE := jwk.str("e")
		modulus, okModulus := decodeBase64url(n)
		exponent, okExponent := decodeBase64url(e)
		if !okN || !okE || !okModulus || !okExponent || len(exponent) == 0 || len(exponent) > 4 {
			return nil, "", false
		}
		key := &rsa.PublicKey{N: new(big.Int).SetBytes(modulus), E: int(new(big.Int).SetBytes(exponent).Int64())}
		// Keys under 2048 bits are refused, as the Node verifier refuses them.
		if key.N.BitLen() < 2048 || key.E < 3 || key.E%2 == 0 {
			return nil, "", false
		}
		return key, jwkThumbprint([][2]string{{"e", e}, {"kty", kty}, {"n", n}}), true
	}
	return nil, "", false
}

// jwkThumbprint is RFC 7638: the SHA-256 of the key's required members as JSON, in lexicographic
// order, without whitespace. HTML characters are not escaped, as JavaScript's JSON.stringify does not.
func jwkThumbprint(members [][2]string) string {
	var canonical bytes.Buffer
	canonical.WriteByte('{')
	for i, member := range members {
		if i > 0 {
			canonical.WriteByte(',')
		}
		canonical.Write(jsonString(member[0]))
		canonical.WriteByte(':')
		canonical.Write(jsonString(member[1]))
	}
	canonical.WriteByte('}')
	digest := sha256.Sum256(canonical.Bytes())
	return base64.RawURLEncoding.EncodeToString(digest[:])
}

func jsonString(value string) []byte {
	var encoded bytes.Buffer
	encoder := json.NewEncoder(&encoded)
	encoder.SetEscapeHTML(false)
	_ = encoder.Encode(value) // a string always encodes
	return bytes.TrimRight(encoded.Bytes(), "\n")
}

func signatureVerifies(proofKey presentedProofKey, signingInput, signature []byte) bool {
	digest := sha256.Sum256(signingInput)
	switch key := proofKey.key.(type) {
	case *ecdsa.PublicKey:
		return verifyES256(key, signingInput, signature)
	case ed25519.PublicKey:
		return ed25519.Verify(key, signingInput, signature)
	case *rsa.PublicKey:
		if proofKey.alg == "PS256" {
			return rsa.VerifyPSS(key, crypto.SHA256, digest[:], signature, &rsa.PSSOptions{SaltLength: 32}) == nil
		}
		return rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], signature) == nil
	}
	return false
}

// accessTokenHash is RFC 9449 section 4.2's ath: the base64url SHA-256 of the access token.
func accessTokenHash(accessToken string) string {
	digest := sha256.Sum256([]byte(accessToken))
	return base64.RawURLEncoding.EncodeToString(digest[:])
}

// sameTarget is whether htu names the request's URL (RFC 9449 section 4.3, point 9): scheme, host,
// port and path after normalisation (case of scheme and host, default ports), query and fragment ignored.
func sameTarget(htu, requestURL string) bool {
	claimed, ok := targetOf(htu)
	if !ok {
		return false
	}
	actual, ok := targetOf(requestURL)
	return ok && claimed == actual
}

func targetOf(raw string) (string, bool) {
	parsed, err := url.Parse(raw)
	if err != nil || parsed.Scheme == "" || parsed.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(parsed.Scheme)
	host := strings.ToLower(parsed.Hostname())
	port := parsed.Port()
	if scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	path := parsed.EscapedPath()
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + path, true
}

// spentProofIDs are the jtis of the proofs taken, each kept while its iat is inside the window
// (RFC 9449 section 11.1). Memory is bounded without ever taking a replay: when full, the oldest
// entry is dropped and the window's lower edge rises to its iat, so any proof as old as a
// forgotten one is refused by its age instead.
type spentProofIDs struct {
	mu            sync.Mutex
	windowSeconds int64
	capacity      int
	iats          map[string]int64
	order         []string // insertion order, close to iat order
	floor         int64    // proofs with an iat at or below it are refused
	hasFloor      bool
}

func newSpentProofIDs(clockSkewSeconds int64, capacity int) *spentProofIDs {
	return &spentProofIDs{windowSeconds: dpopProofLifetimeSeconds + clockSkewSeconds, capacity: capacity, iats: map[string]int64{}}
}

// spend is true the first time a key's jti is spent; false for a replay, or a proof no newer than a forgotten one.
func (spent *spentProofIDs) spend(jkt, jti string, iat, nowSeconds int64) bool {
	spent.mu.Lock()
	defer spent.mu.Unlock()
	spent.forgetAged(nowSeconds)
	if spent.hasFloor && iat <= spent.floor {
		return false
	}
	key := jkt + " " + jti
	if _, seen := spent.iats[key]; seen {
		return false
	}
	if len(spent.iats) >= spent.capacity {
		oldest := spent.order[0]
		spent.order = spent.order[1:]
		if !spent.hasFloor || spent.iats[oldest] > spent.floor {
			spent.floor = spent.iats[oldest]
		}
		spent.hasFloor = true
		delete(spent.iats, oldest)
		if iat <= spent.floor {
			return false
		}
	}
	spent.iats[key] = iat
	spent.order = append(spent.order, key)
	return true
}

// forgetAged drops from the front the entries whose iat left the window: they are refused by their age anyway.
func (spent *spentProofIDs) forgetAged(nowSeconds int64) {
	edge := nowSeconds - spent.windowSeconds
	dropped := 0
	for _, key := range spent.order {
		if spent.iats[key] >= edge {
			break
		}
		delete(spent.iats, key)
		dropped++
	}
	if dropped > 0 {
		spent.order = spent.order[dropped:]
	}
}
