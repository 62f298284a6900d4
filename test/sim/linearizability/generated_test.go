package main

import (
	"bytes"
	"container/heap"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// A small simulator of the system README.md describes, correct by construction, that records
// what its clients see: three regions, each cut off from the others for a while, a mirror with
// lag, forwarded requests whose forwarder gives up, stores that time out after committing,
// clients that stop waiting, roaming and racing clients, forged tokens, and observers that see
// revocations applied. Its histories must be linearizable; made wrong in one line, they must not.

const ms = int64(time.Millisecond)

type simFamily struct {
	id         string
	home       int
	generation int    // the current generation, at home
	mirrored   []int  // each region's view of the generation, as far as the mirror brought it
	revoked    []bool // the revocation is applied in this region
	received   int    // the newest generation a client has received
}

type request struct {
	family    *simFamily
	client    int64
	region    int
	kind      kind
	gen       int
	forged    bool
	call      int64
	answered  bool
	forwarded bool
}

type event struct {
	at, seq int64
	run     func()
}

type events []event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	return e[i].at < e[j].at || e[i].at == e[j].at && e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(event)) }
func (e *events) Pop() (x any) { x, *e = (*e)[len(*e)-1], (*e)[:len(*e)-1]; return x }
func (e events) empty() bool   { return len(e) == 0 }
func (e *events) next() event  { return heap.Pop(e).(event) }
func (e *events) add(ev event) { heap.Push(e, ev) }

type cut struct {
	region   int
	from, to int64
}

type simulation struct {
	rng     *rand.Rand
	regions []string
	cuts    []cut
	queue   events
	now     int64
	seq     int64
	ids     int64
	clients int64
	out     bytes.Buffer
	counts  map[string]int // what the history covers, by feature
}

func (s *simulation) at(t int64, run func()) {
	s.seq++
	s.queue.add(event{at: t, seq: s.seq, run: run})
}

func (s *simulation) chance(p float64) bool { return s.rng.Float64() < p }
func (s *simulation) between(lo, hi int64) int64 {
	return (lo + s.rng.Int64N(hi-lo+1)) * ms
}

func (s *simulation) cutOff(region int, t int64) bool {
	for _, c := range s.cuts {
		if c.region == region && t >= c.from && t < c.to {
			return true
		}
	}
	return false
}

func (s *simulation) linked(x, y int, t int64) bool {
	return x == y || !s.cutOff(x, t) && !s.cutOff(y, t)
}

// delivery is when the mirror brings an event from one region to another: after the cuts
// between them, and a lag.
func (s *simulation) delivery(from, to int, t int64) int64 {
	for moved := true; moved; {
		moved = false
		for _, c := range s.cuts {
			if (c.region == from || c.region == to) && t >= c.from && t < c.to {
				t, moved = c.to, true
			}
		}
	}
	return t + s.between(5, 80)
}

func name(k kind) *string {
	text := string(k)
	return &text
}

func (s *simulation) record(l line) {
	s.ids++
	l.ID = &s.ids
	text, err := json.Marshal(l)
	if err != nil {
		panic(err)
	}
	s.out.Write(text)
	s.out.WriteByte('\n')
}

// answer records a request's answer at t, unless the client already stopped waiting.
func (s *simulation) answer(r *request, t int64, status, newGeneration int) {
	s.at(t, func() {
		if r.answered {
			return
		}
		r.answered = true
		returned := s.now
		l := line{Client: &r.client, Region: &s.regions[r.region], Family: &r.family.id, Op: name(r.kind), Status: &status, Call: &r.call, Return: &returned}
		if !r.forged {
			l.Generation = &r.gen
		} else {
			l.Forged = &r.forged
		}
		if status == 200 && r.kind == opRefresh {
			l.NewGeneration = &newGeneration
			r.family.received = max(r.family.received, newGeneration)
			if r.forwarded {
				s.counts["refresh forwarded home, 200"]++
			}
		}
		if status == 503 || status == 0 {
			s.counts[fmt.Sprintf("%s answered %d", r.kind, status)]++
		}
		s.record(l)
	})
}

func (s *simulation) applyRevocation(f *simFamily, region int) {
	if f.revoked[region] {
		return
	}
	f.revoked[region] = true
	if s.chance(0.7) { // an observer sees it, e.g. a probe's first 401 there
		observer, called, returned := int64(0), s.now, s.now+s.between(0, 3)
		s.record(line{Client: &observer, Region: &s.regions[region], Family: &f.id, Op: name(opApplied), Call: &called, Return: &returned})
		s.counts["applied observed"]++
	}
}

func (s *simulation) revoke(f *simFamily, region int) {
	s.applyRevocation(f, region)
	for to := range s.regions {
		if to != region {
			s.at(s.delivery(region, to, s.now), func() { s.applyRevocation(f, to) })
		}
	}
}

// decideAtHome is the home region's compare-and-set on the family.
func (s *simulation) decideAtHome(r *request, reply func(status, newGeneration int)) {
	f := r.family
	if s.chance(0.02) { // the store timed out before committing
		reply(503, -1)
		return
	}
	status, newGeneration := 401, -1
	if !r.forged && !f.revoked[f.home] && r.gen == f.generation {
		status = 200
		switch r.kind {
		case opRefresh:
			f.generation++
			newGeneration = f.generation
			for to := range s.regions {
				g := f.generation
				if to == f.home {
					continue
				}
				s.at(s.delivery(f.home, to, s.now), func() { f.mirrored[to] = max(f.mirrored[to], g) })
			}
		case opRevoke:
			s.revoke(f, f.home)
		}
	}
	if status == 200 && s.chance(0.02) { // the store timed out after committing
		s.counts["committed, answered 503"]++
		status, newGeneration = 503, -1
	}
	reply(status, newGeneration)
}

func (s *simulation) serve(r *request) {
	f := r.family
	reply := func(status, newGeneration int) { s.answer(r, s.now+s.between(1, 3), status, newGeneration) }
	switch {
	case r.kind == opCharge:
		status := 200
		if f.revoked[r.region] {
			status = 401
		} else if s.chance(0.01) {
			status = 503
		}
		reply(status, -1)
	case r.region == f.home:
		s.decideAtHome(r, reply)
	case r.kind == opRevoke && !s.linked(r.region, f.home, s.now):
		// Home is out of reach: the region revokes only a token it can prove current.
		switch {
		case r.forged || f.revoked[r.region]:
			reply(401, -1)
		case r.gen == f.mirrored[r.region]:
			s.revoke(f, r.region)
			s.counts["revoke recorded away from home, 200"]++
			reply(200, -1)
			// The client checks its own region at once, as a client that revoked a leaked token would.
			if s.chance(0.5) {
				probe := &request{family: f, client: r.client, region: r.region, kind: opCharge, gen: r.gen}
				s.at(s.now+s.between(4, 6), func() { s.send(probe) })
			}
		default:
			reply(503, -1)
		}
	case !s.linked(r.region, f.home, s.now):
		reply(503, -1)
	default:
		r.forwarded = true
		decideAt := s.now + s.between(20, 40)
		relay := func(status, newGeneration int) { s.answer(r, s.now+s.between(20, 40), status, newGeneration) }
		if s.chance(0.1) { // the forwarder gives up; the request may still reach home, later
			s.answer(r, s.now+s.between(10, 15), 503, -1)
			if s.chance(0.5) {
				return
			}
			s.counts["forwarded, decided at home after the forwarder gave up"]++
			decideAt = s.now + s.between(16, 80)
		}
		s.at(decideAt, func() { s.decideAtHome(r, relay) })
	}
}

// send is a client's request; the client may stop waiting, and the request go on or be lost.
func (s *simulation) send(r *request) {
	r.call = s.now
	if s.chance(0.03) {
		s.answer(r, s.now+s.between(1, 10), 0, -1)
		if s.chance(0.5) {
			return
		}
	}
	s.at(s.now+s.between(1, 3), func() { s.serve(r) })
}

// work is one of a family's clients: a few operations, one at a time, anywhere.
func (s *simulation) work(f *simFamily, client int64, left int) {
	if left == 0 {
		return
	}
	region := f.home
	if s.chance(0.4) {
		region = s.rng.IntN(len(s.regions))
	}
	gen := f.received
	if s.chance(0.15) {
		gen = s.rng.IntN(f.received + 1)
	}
	r := &request{family: f, client: client, region: region, gen: gen}
	switch roll := s.rng.Float64(); {
	case roll < 0.45:
		r.kind = opCharge
	case roll < 0.8:
		r.kind, r.forged = opRefresh, s.chance(0.04)
	default:
		r.kind, r.forged = opRevoke, s.chance(0.1)
	}
	s.send(r)
	s.at(s.now+s.between(50, 400), func() { s.work(f, client, left-1) })
}

func (s *simulation) issue(home int, number int) {
	s.clients++
	client, called := s.clients, s.now
	f := &simFamily{id: fmt.Sprintf("%s_f%d", s.regions[home], number), home: home, mirrored: make([]int, len(s.regions)), revoked: make([]bool, len(s.regions))}
	for i := range f.mirrored {
		f.mirrored[i] = -1
	}
	s.at(s.now+s.between(1, 3), func() {
		f.mirrored[home] = 0
		for to := range s.regions {
			if to != home {
				s.at(s.delivery(home, to, s.now), func() { f.mirrored[to] = max(f.mirrored[to], 0) })
			}
		}
		status, returned := 200, s.now
		s.record(line{Client: &client, Region: &s.regions[home], Family: &f.id, Op: name(opGet), Status: &status, Call: &called, Return: &returned})
		for workers := 1 + s.rng.IntN(3); workers > 0; workers-- {
			s.clients++
			s.work(f, s.clients, 3+s.rng.IntN(8))
		}
	})
}

func simulate(seed uint64, families int) (*simulation, []byte) {
	s := &simulation{
		rng:     rand.New(rand.NewPCG(seed, 0)),
		regions: []string{"a", "b", "c"},
		cuts:    []cut{{1, 1000 * ms, 3000 * ms}, {2, 4000 * ms, 6000 * ms}, {0, 7000 * ms, 9000 * ms}, {1, 10000 * ms, 12000 * ms}, {2, 13000 * ms, 15000 * ms}, {0, 16000 * ms, 18000 * ms}},
		counts:  map[string]int{},
	}
	// The run's own record of each cut: what lets the checker know a request could not go home.
	for _, c := range s.cuts {
		nobody := int64(0)
		s.record(line{Client: &nobody, Region: &s.regions[c.region], Op: name(opIsolated), Call: &c.from, Return: &c.to})
	}
	for i := 0; i < families; i++ {
		s.at(s.between(0, 20000), func() { s.issue(s.rng.IntN(len(s.regions)), i) })
	}
	for !s.queue.empty() {
		e := s.queue.next()
		s.now = e.at
		e.run()
	}
	return s, s.out.Bytes()
}

func TestAGeneratedHistoryOfThousandsOfOperationsIsLinearizable(t *testing.T) {
	s, text := simulate(13, 400)
	started := time.Now()
	h, err := readHistory(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	v := newChecker(h).check(30 * time.Second)
	took := time.Since(started)
	t.Logf("%d operations over %d families read and checked in %s; covered: %v", len(h.operations), len(h.families), took.Round(time.Millisecond), s.counts)
	if v.result != porcupine.Ok {
		t.Fatalf("got %s on family %s", v.result, v.family)
	}
	if len(h.operations) < 5000 || len(h.families) != 400 {
		t.Errorf("%d operations over %d families, want 5,000 or more over 400", len(h.operations), len(h.families))
	}
	for _, feature := range []string{"refresh forwarded home, 200", "forwarded, decided at home after the forwarder gave up", "committed, answered 503", "revoke recorded away from home, 200", "applied observed", "refresh answered 503", "revoke answered 503", "refresh answered 0", "revoke answered 0"} {
		if s.counts[feature] == 0 {
			t.Errorf("the generated history has no case of %q", feature)
		}
	}
}

// Each mutation breaks one rule in one line of a generated history (or adds one); the checker
// must name the family it touched.
func TestAGeneratedHistoryMadeWrongInOneLineIsNotLinearizable(t *testing.T) {
	_, text := simulate(13, 400)
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	decode := func(text string) line {
		var l line
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	encode := func(l line) string {
		text, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		return string(text)
	}
	mutations := []struct {
		name   string
		mutate func() (family string, mutated []string)
	}{
		{"a successful refresh repeated in another region", func() (string, []string) {
			for _, text := range lines {
				if l := decode(text); *l.Op == "refresh" && *l.Status == 200 {
					id, region := int64(len(lines)+1), map[string]string{"a": "b", "b": "c", "c": "a"}[*l.Region]
					called, returned := *l.Return+ms, *l.Return+2*ms
					l.ID, l.Region, l.Call, l.Return = &id, &region, &called, &returned
					return *l.Family, append(append([]string{}, lines...), encode(l))
				}
			}
			return "", nil
		}},
		{"a charge refused after the revocation was seen applied in its region answered 200", func() (string, []string) {
			seen := map[string]int64{} // family and region → when an applied there had returned
			for _, text := range lines {
				if l := decode(text); *l.Op == "applied" {
					key := *l.Family + " " + *l.Region
					if when, ok := seen[key]; !ok || *l.Return < when {
						seen[key] = *l.Return
					}
				}
			}
			for i, text := range lines {
				l := decode(text)
				if *l.Op != "charge" {
					continue
				}
				if when, ok := seen[*l.Family+" "+*l.Region]; ok && *l.Op == "charge" && *l.Status == 401 && *l.Call > when {
					status := 200
					l.Status = &status
					mutated := append([]string{}, lines...)
					mutated[i] = encode(l)
					return *l.Family, mutated
				}
			}
			return "", nil
		}},
		{"a refresh away from home answered 503 while cut off from it answered 200", func() (string, []string) {
			h, err := readHistory(bytes.NewReader(text))
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range lines {
				l := decode(text)
				if *l.Op != "refresh" || *l.Status != 503 || l.Forged != nil {
					continue
				}
				if op, err := parseLine([]byte(text)); err == nil && h.cutOffFromHome(op) {
					status, next := 200, *l.Generation+1
					l.Status, l.NewGeneration = &status, &next
					mutated := append([]string{}, lines...)
					mutated[i] = encode(l)
					return *l.Family, mutated
				}
			}
			return "", nil
		}},
		{"the region that recorded a revoke while cut off from home still accepts the family's token after it", func() (string, []string) {
			h, err := readHistory(bytes.NewReader(text))
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range lines {
				l := decode(text)
				op, err := parseLine([]byte(text))
				if err != nil || *l.Op != "revoke" || *l.Status != 200 || !h.cutOffFromHome(op) {
					continue
				}
				for j, later := range lines {
					c := decode(later)
					if *c.Op == "charge" && *c.Family == *l.Family && *c.Region == *l.Region && *c.Status == 401 && *c.Call > *l.Return {
						status := 200
						c.Status = &status
						mutated := append([]string{}, lines...)
						mutated[j] = encode(c)
						return *l.Family, mutated
					}
				}
			}
			return "", nil
		}},
		{"a refused revoke of a forged token answered 200", func() (string, []string) {
			for i, text := range lines {
				if l := decode(text); *l.Op == "revoke" && l.Forged != nil && *l.Status != 200 {
					status := 200
					l.Status = &status
					mutated := append([]string{}, lines...)
					mutated[i] = encode(l)
					return *l.Family, mutated
				}
			}
			return "", nil
		}},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			family, mutated := m.mutate()
			if mutated == nil {
				t.Fatal("the generated history has no line to mutate")
			}
			h, err := readHistory(strings.NewReader(strings.Join(mutated, "\n")))
			if err != nil {
				t.Fatal(err)
			}
			if v := newChecker(h).check(30 * time.Second); v.result != porcupine.Illegal || v.family != family {
				t.Errorf("got %s on family %q, want Illegal on %s", v.result, v.family, family)
			}
		})
	}
}
