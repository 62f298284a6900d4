package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
)

// kind is what a client did: the op field of a history line.
type kind string

const (
	opGet     kind = "get"
	opRefresh kind = "refresh"
	opRevoke  kind = "revoke"
	opCharge  kind = "charge"
	opApplied kind = "applied"
	// opIsolated is not a client's: the run cut a region off from every other (a partition, or
	// the region stopped) for the whole of [call, return].
	opIsolated kind = "isolated"
)

// operation is one line of a history, checked against README.md's "History format".
type operation struct {
	line          int
	id            int64
	client        int64
	region        string
	family        string
	home          string // the family's home region: its id's prefix
	kind          kind
	generation    int // -1 when the line has none
	forged        bool
	status        int
	newGeneration int // -1 when the line has none
	call, ret     int64
}

// isolation is a span during which a region exchanged nothing with any other region.
type isolation struct {
	region   string
	from, to int64
}

// history is a whole file: its operations in file order, grouped by family for the checker.
type history struct {
	operations []operation
	families   []string               // in order of first appearance
	byFamily   map[string][]operation // each family's operations, in file order
	regions    []string               // every region named, homes included, in order of first appearance
	isolations []isolation            // the isolated lines, in file order
}

// cutOffFromHome tells whether a request away from its family's home was made and answered
// entirely while one of the two regions was isolated: it cannot have been forwarded home.
func (h history) cutOffFromHome(op operation) bool {
	if op.region == op.home {
		return false
	}
	for _, i := range h.isolations {
		if (i.region == op.region || i.region == op.home) && i.from <= op.call && op.ret <= i.to {
			return true
		}
	}
	return false
}

// line is a history line as decoded (a nil field was absent, or null) or as written.
type line struct {
	ID            *int64  `json:"id,omitempty"`
	Client        *int64  `json:"client,omitempty"`
	Region        *string `json:"region,omitempty"`
	Family        *string `json:"family,omitempty"`
	Op            *string `json:"op,omitempty"`
	Generation    *int    `json:"generation,omitempty"`
	Forged        *bool   `json:"forged,omitempty"`
	Status        *int    `json:"status,omitempty"`
	NewGeneration *int    `json:"new_generation,omitempty"`
	Call          *int64  `json:"call,omitempty"`
	Return        *int64  `json:"return,omitempty"`
}

// A region code as TESSERA_REGION takes it; a family id is its home region's code, "_", and more.
var (
	regionCode = regexp.MustCompile(`^[a-z0-9]{1,16}$`)
	familyID   = regexp.MustCompile(`^([a-z0-9]{1,16})_[A-Za-z0-9_-]+$`)
)

// maxRegions is how many regions a family's state can name (one bit each).
const maxRegions = 64

// malformedError names the line a history cannot be read past.
type malformedError struct {
	line    int
	message string
}

func (e *malformedError) Error() string {
	if e.line == 0 {
		return e.message
	}
	return fmt.Sprintf("line %d: %s", e.line, e.message)
}

// readHistory reads and validates a JSON Lines history; any error is a *malformedError.
func readHistory(r io.Reader) (history, error) {
	h := history{byFamily: map[string][]operation{}}
	ids := map[int64]int{}
	knownRegion := map[string]bool{}
	addRegion := func(name string) {
		if !knownRegion[name] {
			knownRegion[name] = true
			h.regions = append(h.regions, name)
		}
	}
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	number := 0
	for scanner.Scan() {
		number++
		text := bytes.TrimSpace(scanner.Bytes())
		if len(text) == 0 {
			continue
		}
		op, err := parseLine(text)
		if err != nil {
			return history{}, &malformedError{number, err.Error()}
		}
		op.line = number
		if first, seen := ids[op.id]; seen {
			return history{}, &malformedError{number, fmt.Sprintf("id %d is already used on line %d", op.id, first)}
		}
		ids[op.id] = number
		if op.kind == opIsolated {
			addRegion(op.region)
			h.isolations = append(h.isolations, isolation{region: op.region, from: op.call, to: op.ret})
			continue
		}
		addRegion(op.home)
		addRegion(op.region)
		if len(h.regions) > maxRegions {
			return history{}, &malformedError{number, fmt.Sprintf("more than %d regions", maxRegions)}
		}
		if _, seen := h.byFamily[op.family]; !seen {
			h.families = append(h.families, op.family)
		}
		h.byFamily[op.family] = append(h.byFamily[op.family], op)
		h.operations = append(h.operations, op)
	}
	if err := scanner.Err(); err != nil {
		return history{}, &malformedError{number + 1, err.Error()}
	}
	// Every family starts with the get that made it: without it, its first 200 would be
	// reported as a violation when the recording, not the system, lost something.
	for _, family := range h.families {
		if !hasGet(h.byFamily[family]) {
			return history{}, &malformedError{h.byFamily[family][0].line, fmt.Sprintf("family %s has no get", family)}
		}
	}
	return h, nil
}

func hasGet(operations []operation) bool {
	for _, op := range operations {
		if op.kind == opGet {
			return true
		}
	}
	return false
}

// parseLine decodes one line strictly: unknown fields, trailing data and fields that do not
// belong to the op are errors, so a recorder's typo cannot silently weaken the check.
func parseLine(text []byte) (operation, error) {
	decoder := json.NewDecoder(bytes.NewReader(text))
	decoder.DisallowUnknownFields()
	var l line
	if err := decoder.Decode(&l); err != nil {
		return operation{}, fmt.Errorf("not a JSON object of the history format: %v", err)
	}
	if _, err := decoder.Token(); !errors.Is(err, io.EOF) {
		return operation{}, errors.New("more than one JSON value on the line")
	}
	required := []struct {
		name    string
		present bool
	}{{"id", l.ID != nil}, {"client", l.Client != nil}, {"region", l.Region != nil}, {"op", l.Op != nil}, {"call", l.Call != nil}, {"return", l.Return != nil}}
	for _, field := range required {
		if !field.present {
			return operation{}, fmt.Errorf("%s is missing", field.name)
		}
	}
	if kind(*l.Op) == opIsolated {
		return parseIsolated(l)
	}
	if l.Family == nil {
		return operation{}, errors.New("family is missing")
	}
	op := operation{id: *l.ID, client: *l.Client, region: *l.Region, family: *l.Family, kind: kind(*l.Op), generation: -1, newGeneration: -1, call: *l.Call, ret: *l.Return}
	if op.client < 0 {
		return operation{}, errors.New("client must be 0 or more")
	}
	if !regionCode.MatchString(op.region) {
		return operation{}, fmt.Errorf("region %q is not a region code (1 to 16 of a-z, 0-9)", op.region)
	}
	match := familyID.FindStringSubmatch(op.family)
	if match == nil {
		return operation{}, fmt.Errorf("family %q does not start with its home region and \"_\"", op.family)
	}
	op.home = match[1]
	if op.ret < op.call {
		return operation{}, errors.New("return is before call")
	}
	switch op.kind {
	case opGet, opRefresh, opRevoke, opCharge, opApplied:
	default:
		return operation{}, fmt.Errorf("op %q is not one of get, refresh, revoke, charge, applied, isolated", op.kind)
	}
	if l.Forged != nil {
		if op.kind != opRefresh && op.kind != opRevoke {
			return operation{}, fmt.Errorf("forged belongs to refresh and revoke only, not %s", op.kind)
		}
		op.forged = *l.Forged
	}
	if err := takeGeneration(&op, l.Generation); err != nil {
		return operation{}, err
	}
	if err := takeStatus(&op, l.Status); err != nil {
		return operation{}, err
	}
	return op, takeNewGeneration(&op, l.NewGeneration)
}

// parseIsolated reads an isolated line: a region and a span, nothing of a family or a request.
func parseIsolated(l line) (operation, error) {
	op := operation{id: *l.ID, client: *l.Client, region: *l.Region, kind: opIsolated, generation: -1, newGeneration: -1, call: *l.Call, ret: *l.Return}
	switch {
	case op.client < 0:
		return operation{}, errors.New("client must be 0 or more")
	case !regionCode.MatchString(op.region):
		return operation{}, fmt.Errorf("region %q is not a region code (1 to 16 of a-z, 0-9)", op.region)
	case op.ret < op.call:
		return operation{}, errors.New("return is before call")
	case l.Family != nil || l.Generation != nil || l.Forged != nil || l.Status != nil || l.NewGeneration != nil:
		return operation{}, errors.New("isolated has only id, client, region, op, call and return: it is the run's doing, not a request")
	}
	return op, nil
}

func takeGeneration(op *operation, generation *int) error {
	switch {
	case op.kind == opGet || op.kind == opApplied:
		if generation != nil {
			return fmt.Errorf("%s has no generation", op.kind)
		}
	case generation == nil:
		// A forged token's generation means nothing: its secret is not the family's.
		if !op.forged {
			return fmt.Errorf("%s needs the generation of the token presented", op.kind)
		}
	case *generation < 0:
		return errors.New("generation must be 0 or more")
	default:
		op.generation = *generation
	}
	return nil
}

func takeStatus(op *operation, status *int) error {
	switch {
	case op.kind == opApplied:
		if status != nil {
			return errors.New("applied has no status: it is an observation, not a request")
		}
	case status == nil:
		return fmt.Errorf("%s needs a status (0 when no answer came)", op.kind)
	case op.kind == opGet && *status != 200:
		return errors.New("get must be answered 200: a get that failed made no family to record it under")
	case *status != 0 && *status != 200 && (*status < 400 || *status > 599):
		return fmt.Errorf("status %d is none of 0, 200, 400-599", *status)
	default:
		op.status = *status
	}
	return nil
}

func takeNewGeneration(op *operation, newGeneration *int) error {
	refreshed := op.kind == opRefresh && op.status == 200
	switch {
	case refreshed && newGeneration == nil:
		return errors.New("a refresh answered 200 needs new_generation")
	case !refreshed && newGeneration != nil:
		return errors.New("only a refresh answered 200 has new_generation")
	case refreshed && *newGeneration < 0:
		return errors.New("new_generation must be 0 or more")
	case refreshed:
		op.newGeneration = *newGeneration
	}
	return nil
}
