package verification

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// KeySet holds the issuer's ES256 public keys by kid, as its /.well-known/jwks.json lists them.
// Access tokens and Shared Signals SETs are signed with the same keys. Safe for concurrent use.
type KeySet struct {
	mu   sync.RWMutex
	keys map[string]*ecdsa.PublicKey
}

// NewKeySet returns an empty key set.
func NewKeySet() *KeySet {
	return &KeySet{keys: map[string]*ecdsa.PublicKey{}}
}

// Find returns the key with this kid, if known.
func (set *KeySet) Find(kid string) (*ecdsa.PublicKey, bool) {
	set.mu.RLock()
	defer set.mu.RUnlock()
	key, ok := set.keys[kid]
	return key, ok
}

// Len is the number of keys held.
func (set *KeySet) Len() int {
	set.mu.RLock()
	defer set.mu.RUnlock()
	return len(set.keys)
}

// AddJWK adds one key from its JWK members; a key that is not a P-256 public key with a kid is refused.
func (set *KeySet) AddJWK(raw json.RawMessage) error {
	var jwk struct {
		Kid string `json:"kid"`
		Kty string `json:"kty"`
		Crv string `json:"crv"`
		X   string `json:"x"`
		Y   string `json:"y"`
	}
	if err := json.Unmarshal(raw, &jwk); err != nil {
		return fmt.Errorf("a JWK is not a JSON object of strings: %w", err)
	}
	if jwk.Kid == "" || jwk.Kty != "EC" || jwk.Crv != "P-256" {
		return errors.New("not a P-256 key with a kid")
	}
	key, err := p256Key(jwk.X, jwk.Y)
	if err != nil {
		return err
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	set.keys[jwk.Kid] = key
	return nil
}

// p256Key builds a public key from a JWK's x and y, refusing a point that is not on the curve.
func p256Key(x, y string) (*ecdsa.PublicKey, error) {
	xBytes, okX := decodeBase64url(x)
	yBytes, okY := decodeBase64url(y)
	if !okX || !okY || len(xBytes) != 32 || len(yBytes) != 32 {
		return nil, errors.New("a P-256 key's x and y are 32 bytes each, base64url")
	}
	point := append([]byte{4}, append(xBytes, yBytes...)...)
	return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
}

// ErrJWKSUnavailable is returned when the issuer's key set could not be loaded; the keys known stay as they were.
var ErrJWKSUnavailable = errors.New("the issuer's JWKS could not be loaded")

// maxJWKSBytes bounds what is read of the issuer's answer: a key set is a few hundred bytes a key.
const maxJWKSBytes = 1 << 20

// LoadJWKS loads the key set at url into set. Keys of other types are passed over, not fatal, as in
// the Node verifier; keys are added, never removed, so a token signed just before a rotation still verifies.
func LoadJWKS(ctx context.Context, client *http.Client, url string, set *KeySet) error {
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrJWKSUnavailable, err)
	}
	request.Header.Set("Accept", "application/json")
	answer, err := client.Do(request)
	if err != nil {
		return fmt.Errorf("%w from %s: %v", ErrJWKSUnavailable, url, err)
	}
	defer answer.Body.Close()
	if answer.StatusCode != http.StatusOK {
		return fmt.Errorf("%w from %s: HTTP %d", ErrJWKSUnavailable, url, answer.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(answer.Body, maxJWKSBytes))
	if err != nil {
		return fmt.Errorf("%w from %s: %v", ErrJWKSUnavailable, url, err)
	}
	var listed struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &listed); err != nil {
		return fmt.Errorf("%w: the answer from %s is not a key set: %v", ErrJWKSUnavailable, url, err)
	}
	for _, key := range listed.Keys {
		// A key of another kind is passed over: Tessera signs with P-256 only.
		_ = set.AddJWK(key)
	}
	return nil
}

// keyRefresh loads the keys again when a token names an unknown kid: anyone can put any kid in a
// token, so loads are single-flight and at most one per cooldown; a flood of forged kids costs one
// load per cooldown.
type keyRefresh struct {
	load     func(context.Context) error
	cooldown time.Duration
	now      func() time.Time

	mu          sync.Mutex
	inFlight    chan struct{}
	lastStarted time.Time
}

func newKeyRefresh(load func(context.Context) error, cooldown time.Duration, now func() time.Time) *keyRefresh {
	return &keyRefresh{load: load, cooldown: cooldown, now: now}
}

// refresh waits for a load in flight, starts one if the cooldown has passed, or returns at once.
// A failed load leaves the keys as they were: the caller answers from what it knows.
func (refresh *keyRefresh) refresh(ctx context.Context) {
	refresh.mu.Lock()
	if done := refresh.inFlight; done != nil {
		refresh.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
		}
		return
	}
	if !refresh.lastStarted.IsZero() && refresh.now().Sub(refresh.lastStarted) < refresh.cooldown {
		refresh.mu.Unlock()
		return
	}
	refresh.lastStarted = refresh.now()
	done := make(chan struct{})
	refresh.inFlight = done
	refresh.mu.Unlock()

	// The load gets its own deadline, not the first caller's: others wait on it too.
	loadCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	_ = refresh.load(loadCtx)
	cancel()

	refresh.mu.Lock()
	refresh.inFlight = nil
	refresh.mu.Unlock()
	close(done)
}
