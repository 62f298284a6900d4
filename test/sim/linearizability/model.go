package main

import (
	"fmt"
	"strings"

	"github.com/anishathalye/porcupine"
)

// The model of one token family, as README.md's "The model" states it. The history is
// partitioned by family: no rule relates two families.

// unissued is a family's generation before get-oauth-token made it.
const unissued = -1

// familyState is what the regions, together, hold about a family at one instant.
type familyState struct {
	generation int    // the current refresh token's generation, as the home region's log has it
	revokedIn  uint64 // bit i: region i refuses the family's tokens (the revocation is applied there)
}

func (s familyState) revokedAt(region int) bool { return s.revokedIn&(1<<region) != 0 }

func (s familyState) revoking(region int) familyState {
	s.revokedIn |= 1 << region
	return s
}

// input is what the client sent, and where; regions are indices into the history's regions.
type input struct {
	family     string
	kind       kind
	region     int
	home       int
	generation int
	forged     bool
	// cutOffFromHome: made and answered away from home while one of the two regions was isolated,
	// so it was not forwarded: a refresh cannot succeed, a revoke can only have been recorded here.
	cutOffFromHome bool
}

// output is what the client got back.
type output struct {
	status        int
	newGeneration int
}

// outcome is what an answer tells about a request's effect.
type outcome int

const (
	succeeded outcome = iota // 200: it took effect, within the request's interval
	refused                  // 4xx: it took no effect
	unknown                  // no answer, or 5xx: it may take effect, even after the answer
)

func outcomeOf(status int) outcome {
	switch {
	case status == 200:
		return succeeded
	case status == 0 || status >= 500:
		return unknown
	default:
		return refused
	}
}

// step gives every state the family can be in after the operation, from state s; none when
// the operation's answer is impossible from s.
func step(s familyState, in input, out output) []familyState {
	result := outcomeOf(out.status)
	switch in.kind {
	case opGet:
		// A family is made once, by get-oauth-token in its home region.
		if s.generation == unissued && in.region == in.home {
			return []familyState{{generation: 0}}
		}
		return nil
	case opRefresh:
		// Rotation is a compare-and-set at home: the presented token must be the current one,
		// and home must not have applied a revocation of the family yet.
		canRotate := !in.forged && s.generation != unissued && in.generation == s.generation && !s.revokedAt(in.home)
		rotated := familyState{generation: s.generation + 1, revokedIn: s.revokedIn}
		switch {
		case result == succeeded && in.cutOffFromHome:
			return nil
		case result == succeeded && canRotate && out.newGeneration == in.generation+1:
			return []familyState{rotated}
		case result == succeeded:
			return nil
		case result == unknown && canRotate:
			return []familyState{s, rotated}
		default:
			return []familyState{s}
		}
	case opRevoke:
		// A revocation commits either at home (answered there, or forwarded there) or, away
		// from home, in the region that answered (recorded locally while home was out of reach);
		// the history cannot tell which, so both are possible. Either way the token presented
		// was issued: home checks it is current, another region that it is current as far as
		// its mirror has caught up, which is never ahead of home.
		var committed []familyState
		if !in.forged && in.generation <= s.generation {
			// Cut off from home, a revoke answered 200 was recorded here, and refused here at once.
			if !(in.cutOffFromHome && result == succeeded) {
				committed = append(committed, s.revoking(in.home))
			}
			if in.region != in.home {
				committed = append(committed, s.revoking(in.region))
			}
		}
		switch result {
		case succeeded:
			return committed
		case unknown:
			return append([]familyState{s}, committed...)
		default:
			return []familyState{s}
		}
	case opCharge:
		// An access token the family issued, in a region that has not applied its revocation.
		if result != succeeded || (in.generation <= s.generation && !s.revokedAt(in.region)) {
			return []familyState{s}
		}
		return nil
	case opApplied:
		// A revocation is applied only where one committed first, or after it, by the mirror.
		if s.revokedIn != 0 {
			return []familyState{s.revoking(in.region)}
		}
		return nil
	}
	panic(fmt.Sprintf("unknown op %q", in.kind))
}

// newModel is the porcupine model of a family; regions names the state's region bits.
func newModel(regions []string) porcupine.Model {
	nondeterministic := porcupine.NondeterministicModel{
		Partition: byFamily,
		Init:      func() []interface{} { return []interface{}{familyState{generation: unissued}} },
		Step: func(state, in, out interface{}) []interface{} {
			next := step(state.(familyState), in.(input), out.(output))
			states := make([]interface{}, len(next))
			for i, s := range next {
				states[i] = s
			}
			return states
		},
		Hash: func(state interface{}) uint64 {
			s := state.(familyState)
			return uint64(s.generation+1)*0x9e3779b97f4a7c15 ^ s.revokedIn
		},
		DescribeOperation: func(in, out interface{}) string {
			return describe(in.(input), out.(output), regions)
		},
		DescribeState: func(state interface{}) string {
			return describeState(state.(familyState), regions)
		},
		DescribeOperationMetadata: func(info interface{}) string {
			if info == nil {
				return ""
			}
			return info.(string)
		},
	}
	return nondeterministic.ToModel()
}

func byFamily(operations []porcupine.Operation) [][]porcupine.Operation {
	index := map[string]int{}
	var partitions [][]porcupine.Operation
	for _, op := range operations {
		family := op.Input.(input).family
		i, seen := index[family]
		if !seen {
			i = len(partitions)
			index[family] = i
			partitions = append(partitions, nil)
		}
		partitions[i] = append(partitions[i], op)
	}
	return partitions
}

// describe is an operation as the violation report and the visualisation show it,
// e.g. "refresh g2 in b → 200 g3".
func describe(in input, out output, regions []string) string {
	var b strings.Builder
	b.WriteString(string(in.kind))
	if in.forged {
		b.WriteString(" forged")
	} else if in.generation >= 0 {
		fmt.Fprintf(&b, " g%d", in.generation)
	}
	fmt.Fprintf(&b, " in %s", regions[in.region])
	if in.cutOffFromHome {
		b.WriteString(" (cut off from home)")
	}
	if in.kind == opApplied {
		return b.String()
	}
	if out.status == 0 {
		b.WriteString(" → no answer")
	} else {
		fmt.Fprintf(&b, " → %d", out.status)
	}
	if out.newGeneration >= 0 {
		fmt.Fprintf(&b, " g%d", out.newGeneration)
	}
	return b.String()
}

func describeState(s familyState, regions []string) string {
	if s.generation == unissued {
		return "not issued"
	}
	var revoked []string
	for i, name := range regions {
		if s.revokedAt(i) {
			revoked = append(revoked, name)
		}
	}
	if len(revoked) == 0 {
		return fmt.Sprintf("g%d", s.generation)
	}
	return fmt.Sprintf("g%d, revoked in %s", s.generation, strings.Join(revoked, " "))
}
