package verification

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math"
	"math/big"
	"strings"
)

// compactJWS is a compact JWS split into its three parts, each checked to be base64url text.
type compactJWS struct {
	encodedHeader    string
	encodedPayload   string
	encodedSignature string
}

// splitCompact splits a compact JWS; ok is false unless it has exactly three non-empty base64url parts.
func splitCompact(token string) (compactJWS, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return compactJWS{}, false
	}
	for _, part := range parts {
		if !isBase64url(part) {
			return compactJWS{}, false
		}
	}
	return compactJWS{parts[0], parts[1], parts[2]}, true
}

func (jws compactJWS) signingInput() []byte {
	return []byte(jws.encodedHeader + "." + jws.encodedPayload)
}

func isBase64url(part string) bool {
	if part == "" {
		return false
	}
	for i := 0; i < len(part); i++ {
		c := part[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// decodeBase64url decodes without padding. The unused low bits of the last character are ignored,
// as Node's decoder ignores them; callers that need one spelling per value compare re-encodings.
func decodeBase64url(part string) ([]byte, bool) {
	decoded, err := base64.RawURLEncoding.DecodeString(part)
	return decoded, err == nil
}

// jsonObject is a decoded JSON object whose members are read one by one, so that each claim's
// type is checked rather than coerced.
type jsonObject map[string]json.RawMessage

func parseJSONObject(encoded string) (jsonObject, bool) {
	decoded, ok := decodeBase64url(encoded)
	if !ok {
		return nil, false
	}
	return parseJSONObjectBytes(decoded)
}

func parseJSONObjectBytes(decoded []byte) (jsonObject, bool) {
	trimmed := bytes.TrimSpace(decoded)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, false
	}
	var object jsonObject
	if err := json.Unmarshal(trimmed, &object); err != nil {
		return nil, false
	}
	return object, true
}

func (object jsonObject) has(name string) bool {
	_, present := object[name]
	return present
}

// str is a member that is a JSON string.
func (object jsonObject) str(name string) (string, bool) {
	raw, present := object[name]
	if !present || len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var value string
	if err := json.Unmarshal(raw, &value); err != nil {
		return "", false
	}
	return value, true
}

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: the issuer writes its numbers from JavaScript.
const maxSafeInteger = 1<<53 - 1

// safeInteger is a member that is a JSON number holding an integer JavaScript represents exactly,
// what Number.isSafeInteger accepts (so 5.0 is 5).
func (object jsonObject) safeInteger(name string) (int64, bool) {
	number, ok := object.number(name)
	if !ok || number != math.Trunc(number) || math.Abs(number) > maxSafeInteger {
		return 0, false
	}
	return int64(number), true
}

// number is a member that is a finite JSON number.
func (object jsonObject) number(name string) (float64, bool) {
	raw, present := object[name]
	if !present || len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return 0, false
	}
	var value float64
	if err := json.Unmarshal(raw, &value); err != nil || math.IsInf(value, 0) || math.IsNaN(value) {
		return 0, false
	}
	return value, true
}

func (object jsonObject) object(name string) (jsonObject, bool) {
	raw, present := object[name]
	if !present {
		return nil, false
	}
	return parseJSONObjectBytes(raw)
}

// verifyES256 checks a P-256 signature in JOSE's form: r and s, 32 bytes each.
func verifyES256(key *ecdsa.PublicKey, signingInput, signature []byte) bool {
	if len(signature) != 64 {
		return false
	}
	digest := sha256.Sum256(signingInput)
	return ecdsa.Verify(key, digest[:], new(big.Int).SetBytes(signature[:32]), new(big.Int).SetBytes(signature[32:]))
}
