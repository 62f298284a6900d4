package verification

import (
	"context"
	"sync"
)

// SignalConsumer verifies SETs and applies their revocations to a projection, dropping a SET
// whose jti it has applied before: Tessera delivers at least once, with the same jti each time.
type SignalConsumer struct {
	verifier   *SETVerifier
	projection *RevocationProjection

	mu       sync.Mutex
	applied  map[string]struct{}
	order    []string
	capacity int
}

// maxRememberedSETs bounds the duplicate filter; a duplicate older than that is applied again,
// which changes nothing (applying is a max()).
const maxRememberedSETs = 10_000

// NewSignalConsumer applies what verifier accepts to projection.
func NewSignalConsumer(verifier *SETVerifier, projection *RevocationProjection) *SignalConsumer {
	return &SignalConsumer{verifier: verifier, projection: projection, applied: map[string]struct{}{}, capacity: maxRememberedSETs}
}

// Consume verifies one SET and applies it; the error is a *SETRejection for a SET refused.
func (consumer *SignalConsumer) Consume(ctx context.Context, set string) (SecurityEvent, error) {
	event, err := consumer.verifier.Verify(ctx, set)
	if err != nil {
		return SecurityEvent{}, err
	}
	if !consumer.firstTime(event.ID) {
		return event, nil
	}
	for _, revocation := range event.Revocations {
		consumer.projection.Apply(revocation)
	}
	return event, nil
}

func (consumer *SignalConsumer) firstTime(jti string) bool {
	consumer.mu.Lock()
	defer consumer.mu.Unlock()
	if _, seen := consumer.applied[jti]; seen {
		return false
	}
	if len(consumer.order) >= consumer.capacity {
		delete(consumer.applied, consumer.order[0])
		consumer.order = consumer.order[1:]
	}
	consumer.applied[jti] = struct{}{}
	consumer.order = append(consumer.order, jti)
	return true
}
