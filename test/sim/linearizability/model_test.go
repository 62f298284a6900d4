package main

import (
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Hand-built histories of two regions, a and b. Times are small integers: only their order
// matters. Each comment says what happened in the system the history records.

func checkText(t *testing.T, text string) verdict {
	t.Helper()
	h, err := readHistory(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return newChecker(h).check(10 * time.Second)
}

func TestCorrectHistoriesAreLinearizable(t *testing.T) {
	cases := []struct{ name, history string }{
		{"a refresh forwarded from b to a wins, and of two concurrent refreshes of one token in a and b one wins and the other is refused", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"b","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":20,"return":30}
{"id":3,"client":1,"region":"a","family":"a_f","op":"refresh","generation":1,"status":200,"new_generation":2,"call":40,"return":60}
{"id":4,"client":2,"region":"b","family":"a_f","op":"refresh","generation":1,"status":401,"call":41,"return":59}
{"id":5,"client":1,"region":"b","family":"a_f","op":"charge","generation":2,"status":200,"call":70,"return":71}
`},
		{"during a partition b issues and refreshes its own families, answers 503 to a refresh of a's family (which did not commit: its retry after the heal wins), and accepts a's revocation until it is applied in b", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":2,"region":"a","family":"a_r","op":"get","status":200,"call":0,"return":10}
{"id":3,"client":3,"region":"b","family":"b_f","op":"get","status":200,"call":20,"return":30}
{"id":4,"client":3,"region":"b","family":"b_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":31,"return":32}
{"id":5,"client":1,"region":"b","family":"a_f","op":"refresh","generation":0,"status":503,"call":33,"return":34}
{"id":6,"client":2,"region":"a","family":"a_r","op":"revoke","generation":0,"status":200,"call":35,"return":36}
{"id":7,"client":2,"region":"b","family":"a_r","op":"charge","generation":0,"status":200,"call":37,"return":38}
{"id":8,"client":1,"region":"b","family":"a_f","op":"charge","generation":0,"status":200,"call":39,"return":40}
{"id":9,"client":9,"region":"b","family":"a_r","op":"applied","call":50,"return":51}
{"id":10,"client":2,"region":"b","family":"a_r","op":"charge","generation":0,"status":401,"call":52,"return":53}
{"id":11,"client":1,"region":"b","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":54,"return":55}
`},
		{"a revoke forwarded from b answered 503 commits at home after the forwarder gave up: a and b still accept the token until it is applied, then refuse it", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"b","family":"a_f","op":"revoke","generation":0,"status":503,"call":20,"return":30}
{"id":3,"client":1,"region":"a","family":"a_f","op":"charge","generation":0,"status":200,"call":31,"return":32}
{"id":4,"client":1,"region":"b","family":"a_f","op":"charge","generation":0,"status":200,"call":31,"return":32}
{"id":5,"client":9,"region":"a","family":"a_f","op":"applied","call":40,"return":41}
{"id":6,"client":9,"region":"b","family":"a_f","op":"applied","call":50,"return":51}
{"id":7,"client":1,"region":"a","family":"a_f","op":"refresh","generation":0,"status":401,"call":60,"return":61}
`},
		{"a revoke answered 200 in b was forwarded to a: refused in a at once, accepted in b until the mirror brings it there", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"b","family":"a_f","op":"revoke","generation":0,"status":200,"call":20,"return":30}
{"id":3,"client":2,"region":"a","family":"a_f","op":"charge","generation":0,"status":401,"call":31,"return":32}
{"id":4,"client":2,"region":"b","family":"a_f","op":"charge","generation":0,"status":200,"call":33,"return":34}
{"id":5,"client":9,"region":"b","family":"a_f","op":"applied","call":40,"return":41}
{"id":6,"client":2,"region":"b","family":"a_f","op":"charge","generation":0,"status":401,"call":42,"return":43}
`},
		{"a revoke answered 503 that never committed, and an unanswered one that did not either: the family lives on", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"b","family":"a_f","op":"revoke","generation":0,"status":503,"call":20,"return":30}
{"id":3,"client":1,"region":"a","family":"a_f","op":"revoke","generation":0,"status":0,"call":31,"return":1000}
{"id":4,"client":2,"region":"a","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":40,"return":41}
{"id":5,"client":2,"region":"a","family":"a_f","op":"charge","generation":1,"status":200,"call":42,"return":43}
{"id":6,"client":2,"region":"b","family":"a_f","op":"charge","generation":1,"status":200,"call":44,"return":45}
`},
		{"a revoke recorded in b while a is out of reach is refused in b at once and applied in a later; a refresh that wins at home before it arrives is allowed, its new tokens are refused in b", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"b","family":"a_f","op":"revoke","generation":0,"status":200,"call":20,"return":30}
{"id":3,"client":1,"region":"b","family":"a_f","op":"charge","generation":0,"status":401,"call":31,"return":32}
{"id":4,"client":2,"region":"a","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":33,"return":34}
{"id":5,"client":2,"region":"a","family":"a_f","op":"charge","generation":1,"status":200,"call":35,"return":36}
{"id":6,"client":2,"region":"b","family":"a_f","op":"charge","generation":1,"status":401,"call":37,"return":38}
{"id":7,"client":9,"region":"a","family":"a_f","op":"applied","call":50,"return":51}
{"id":8,"client":2,"region":"a","family":"a_f","op":"charge","generation":1,"status":401,"call":52,"return":53}
{"id":9,"client":2,"region":"a","family":"a_f","op":"refresh","generation":1,"status":401,"call":54,"return":55}
`},
		{"a revoke in b presenting a generation b's mirror still holds as current after a already rotated it is allowed", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"a","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":20,"return":21}
{"id":3,"client":2,"region":"b","family":"a_f","op":"revoke","generation":0,"status":200,"call":30,"return":31}
{"id":4,"client":1,"region":"b","family":"a_f","op":"charge","generation":1,"status":401,"call":32,"return":33}
`},
		{"while a is isolated, b records a revoke of a's family (refused in b at once, accepted in a until applied there), answers 503 to its refresh, and the refresh at home fails once applied", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":0,"region":"a","op":"isolated","call":100,"return":200}
{"id":3,"client":1,"region":"b","family":"a_f","op":"revoke","generation":0,"status":200,"call":110,"return":120}
{"id":4,"client":1,"region":"b","family":"a_f","op":"charge","generation":0,"status":401,"call":121,"return":122}
{"id":5,"client":2,"region":"a","family":"a_f","op":"charge","generation":0,"status":200,"call":130,"return":131}
{"id":6,"client":2,"region":"b","family":"a_f","op":"refresh","generation":0,"status":503,"call":140,"return":141}
{"id":7,"client":9,"region":"a","family":"a_f","op":"applied","call":300,"return":301}
{"id":8,"client":2,"region":"a","family":"a_f","op":"refresh","generation":0,"status":401,"call":310,"return":311}
`},
		{"forged tokens are refused, with 401 or 503, anywhere", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":6,"region":"b","family":"a_f","op":"revoke","forged":true,"status":401,"call":20,"return":21}
{"id":3,"client":6,"region":"b","family":"a_f","op":"revoke","forged":true,"status":503,"call":22,"return":23}
{"id":4,"client":6,"region":"a","family":"a_f","op":"refresh","generation":0,"forged":true,"status":401,"call":24,"return":25}
{"id":5,"client":1,"region":"a","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":30,"return":31}
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if v := checkText(t, c.history); v.result != porcupine.Ok {
				t.Errorf("got %s on family %s, want Ok", v.result, v.family)
			}
		})
	}
}

func TestEachRuleCatchesItsViolation(t *testing.T) {
	cases := []struct{ name, history string }{
		{"two refreshes of one generation both answered 200, in a and in b", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"a","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":20,"return":40}
{"id":3,"client":2,"region":"b","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":21,"return":41}
`},
		{"a refresh answered 200 after a revoke answered 200 at home", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"a","family":"a_f","op":"revoke","generation":0,"status":200,"call":20,"return":30}
{"id":3,"client":2,"region":"b","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":31,"return":40}
`},
		{"a refresh answered 200 after a revocation recorded in b was applied at home", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"b","family":"a_f","op":"revoke","generation":0,"status":200,"call":20,"return":30}
{"id":3,"client":9,"region":"a","family":"a_f","op":"applied","call":40,"return":41}
{"id":4,"client":2,"region":"a","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":50,"return":51}
`},
		{"a charge answered 200 at home after a revoke answered 200 there", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"a","family":"a_f","op":"revoke","generation":0,"status":200,"call":20,"return":30}
{"id":3,"client":2,"region":"a","family":"a_f","op":"charge","generation":0,"status":200,"call":31,"return":32}
`},
		{"charges answered 200 in b and in a after a revoke answered 200 in b, which was applied in one of them", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"b","family":"a_f","op":"revoke","generation":0,"status":200,"call":20,"return":30}
{"id":3,"client":2,"region":"b","family":"a_f","op":"charge","generation":0,"status":200,"call":31,"return":32}
{"id":4,"client":2,"region":"a","family":"a_f","op":"charge","generation":0,"status":200,"call":33,"return":34}
`},
		{"a charge answered 200 in b after the revocation was applied in b", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"a","family":"a_f","op":"revoke","generation":0,"status":200,"call":20,"return":30}
{"id":3,"client":9,"region":"b","family":"a_f","op":"applied","call":40,"return":41}
{"id":4,"client":2,"region":"b","family":"a_f","op":"charge","generation":0,"status":200,"call":42,"return":43}
`},
		{"a revoke of a forged token answered 200", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":6,"region":"b","family":"a_f","op":"revoke","forged":true,"status":200,"call":20,"return":30}
`},
		{"a refresh of a forged token answered 200", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":6,"region":"a","family":"a_f","op":"refresh","generation":0,"forged":true,"status":200,"new_generation":1,"call":20,"return":30}
`},
		{"a revoke answered 200 presenting a generation never issued", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":6,"region":"b","family":"a_f","op":"revoke","generation":1,"status":200,"call":20,"return":30}
`},
		{"a charge answered 200 presenting a generation never issued", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":6,"region":"b","family":"a_f","op":"charge","generation":3,"status":200,"call":20,"return":30}
`},
		{"a refresh answered 200 that skips a generation", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"a","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":2,"call":20,"return":30}
`},
		{"a revocation applied in b when no revoke could have committed: only refused and forged ones", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"a","family":"a_f","op":"revoke","generation":0,"status":401,"call":20,"return":30}
{"id":3,"client":6,"region":"b","family":"a_f","op":"revoke","forged":true,"status":503,"call":31,"return":32}
{"id":4,"client":9,"region":"b","family":"a_f","op":"applied","call":40,"return":41}
`},
		{"a revocation applied in b before the only revoke was sent", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":9,"region":"b","family":"a_f","op":"applied","call":20,"return":21}
{"id":3,"client":1,"region":"a","family":"a_f","op":"revoke","generation":0,"status":0,"call":30,"return":1000}
`},
		{"a refresh away from home answered 200 while home was isolated: it cannot have been forwarded", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":0,"region":"a","op":"isolated","call":100,"return":200}
{"id":3,"client":1,"region":"b","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":110,"return":120}
`},
		{"a revoke recorded in b while b was isolated, and a charge answered 200 in b after it", `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":0,"region":"b","op":"isolated","call":100,"return":200}
{"id":3,"client":1,"region":"b","family":"a_f","op":"revoke","generation":0,"status":200,"call":110,"return":120}
{"id":4,"client":1,"region":"b","family":"a_f","op":"charge","generation":0,"status":200,"call":121,"return":122}
`},
		{"a family issued by get-oauth-token outside its home region", `
{"id":1,"client":1,"region":"b","family":"a_f","op":"get","status":200,"call":0,"return":10}
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if v := checkText(t, c.history); v.result != porcupine.Illegal || v.family != "a_f" {
				t.Errorf("got %s on family %q, want Illegal on a_f", v.result, v.family)
			}
		})
	}
}

func TestTheFirstViolatingFamilyInTheFileIsNamed(t *testing.T) {
	v := checkText(t, `
{"id":1,"client":1,"region":"b","family":"b_ok","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":2,"region":"a","family":"a_bad","op":"get","status":200,"call":0,"return":10}
{"id":3,"client":3,"region":"a","family":"a_worse","op":"get","status":200,"call":0,"return":10}
{"id":4,"client":1,"region":"b","family":"b_ok","op":"refresh","generation":0,"status":200,"new_generation":1,"call":20,"return":30}
{"id":5,"client":3,"region":"a","family":"a_worse","op":"refresh","generation":0,"forged":true,"status":200,"new_generation":1,"call":20,"return":30}
{"id":6,"client":2,"region":"a","family":"a_bad","op":"revoke","forged":true,"status":200,"call":40,"return":50}
`)
	if v.result != porcupine.Illegal || v.family != "a_bad" || v.checked != 1 {
		t.Errorf("got %+v, want Illegal on a_bad after 1 linearizable family", v)
	}
}

// The history "a revoke forwarded from b answered 503 commits at home after the forwarder gave
// up" above is linearizable only because of this: were the revoke to commit by its answer, at
// home or in b, one of the two charges after it would be impossible.
func TestARequestWithoutAnswerStaysPendingToTheEndOfTheRun(t *testing.T) {
	h, err := readHistory(strings.NewReader(`
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"b","family":"a_f","op":"revoke","generation":0,"status":503,"call":20,"return":30}
{"id":3,"client":1,"region":"a","family":"a_f","op":"charge","generation":0,"status":0,"call":31,"return":77}
`))
	if err != nil {
		t.Fatal(err)
	}
	ops := newChecker(h).operations["a_f"]
	if ops[1].Return != 77 || ops[2].Return != 77 || ops[0].Return != 10 {
		t.Errorf("returns %d, %d, %d; want 10, 77 (the end of the run), 77", ops[0].Return, ops[1].Return, ops[2].Return)
	}
}

// What the isolated lines add: the same history without them is linearizable (the revoke could
// have been forwarded home, and b accept the token until the mirror brought it), with them it is not.
func TestIsolationTellsARevokeRecordedAwayFromHome(t *testing.T) {
	requests := `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":3,"client":1,"region":"b","family":"a_f","op":"revoke","generation":0,"status":200,"call":110,"return":120}
{"id":4,"client":1,"region":"b","family":"a_f","op":"charge","generation":0,"status":200,"call":121,"return":122}
`
	if v := checkText(t, requests); v.result != porcupine.Ok {
		t.Fatalf("without isolation: got %s, want Ok", v.result)
	}
	if v := checkText(t, requests+`{"id":2,"client":0,"region":"a","op":"isolated","call":100,"return":200}`); v.result != porcupine.Illegal {
		t.Errorf("with a isolated throughout the revoke: got %s, want Illegal", v.result)
	}
	// Isolated for only part of the revoke: it may have been forwarded before the cut.
	if v := checkText(t, requests+`{"id":2,"client":0,"region":"a","op":"isolated","call":115,"return":200}`); v.result != porcupine.Ok {
		t.Errorf("with a isolated from the middle of the revoke: got %s, want Ok", v.result)
	}
}
