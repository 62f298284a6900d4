package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func TestCheckedOperationsLeaveOutWhatCannotChangeTheVerdict(t *testing.T) {
	h, err := readHistory(strings.NewReader(`
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"b","family":"a_f","op":"charge","generation":0,"status":401,"call":11,"return":12}
{"id":3,"client":2,"region":"b","family":"a_f","op":"refresh","generation":0,"status":401,"call":13,"return":14}
{"id":4,"client":6,"region":"b","family":"a_f","op":"revoke","forged":true,"status":503,"call":15,"return":16}
{"id":5,"client":2,"region":"b","family":"a_f","op":"refresh","generation":0,"status":503,"call":17,"return":18}
{"id":6,"client":1,"region":"a","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":19,"return":20}
{"id":7,"client":1,"region":"b","family":"a_f","op":"refresh","generation":1,"status":503,"call":21,"return":22}
{"id":8,"client":1,"region":"b","family":"a_f","op":"refresh","generation":1,"status":0,"call":23,"return":24}
{"id":9,"client":1,"region":"b","family":"a_f","op":"revoke","generation":1,"status":503,"call":25,"return":26}
{"id":10,"client":1,"region":"b","family":"a_f","op":"revoke","generation":1,"status":503,"call":27,"return":28}
{"id":11,"client":2,"region":"b","family":"a_f","op":"revoke","generation":0,"status":0,"call":29,"return":30}
{"id":12,"client":1,"region":"a","family":"a_f","op":"revoke","generation":1,"status":503,"call":31,"return":32}
{"id":13,"client":1,"region":"a","family":"a_f","op":"charge","generation":1,"status":200,"call":33,"return":34}
{"id":14,"client":9,"region":"b","family":"a_f","op":"applied","call":35,"return":36}
`))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, op := range checkedOperations(h.byFamily["a_f"]) {
		kept = append(kept, fmt.Sprint(op.id))
	}
	// Out: 2-4 change nothing; 5 presents g0, which the 200 of 6 moved on; 8 presents g1 as 7
	// did earlier; 10 presents g1 in b as 9 did earlier. In: 11 presents a lower generation
	// than 9, 12 is in another region.
	if got, want := strings.Join(kept, " "), "1 6 7 9 11 12 13 14"; got != want {
		t.Errorf("kept %s, want %s", got, want)
	}
}

func TestAPendingRevokeOfALowerGenerationThanAnEarlierOneInItsRegionIsStillChecked(t *testing.T) {
	// Only the second revoke can have committed (the first presents a generation never
	// issued), and the applied needs one that did.
	v := checkText(t, `
{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":6,"region":"b","family":"a_f","op":"revoke","generation":5,"status":503,"call":20,"return":25}
{"id":3,"client":1,"region":"b","family":"a_f","op":"revoke","generation":0,"status":503,"call":30,"return":35}
{"id":4,"client":9,"region":"b","family":"a_f","op":"applied","call":40,"return":41}
`)
	if v.result != porcupine.Ok {
		t.Errorf("got %s, want Ok", v.result)
	}
}

func TestAViolationAmongHundredsOfRetriedRequestsIsFoundWithinSeconds(t *testing.T) {
	// A client in b that keeps getting 503 for its refreshes and revokes while its other
	// refreshes win at home, then a refresh of the first generation answered 200 again.
	var text strings.Builder
	id, now := 1, int64(20)
	add := func(format string, args ...any) {
		fmt.Fprintf(&text, `{"id":%d,"client":1,"family":"a_f",`+format+`,"call":%d,"return":%d}`+"\n", append([]any{id}, append(args, now, now+5)...)...)
		id, now = id+1, now+10
	}
	text.WriteString(`{"id":0,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}` + "\n")
	for g := 0; g < 100; g++ {
		add(`"region":"b","op":"refresh","generation":%d,"status":503`, g)
		add(`"region":"b","op":"revoke","generation":%d,"status":0`, g)
		add(`"region":"a","op":"refresh","generation":%d,"status":200,"new_generation":%d`, g, g+1)
	}
	add(`"region":"a","op":"refresh","generation":0,"status":200,"new_generation":1`)
	h, err := readHistory(strings.NewReader(text.String()))
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	v := newChecker(h).check(5 * time.Second)
	t.Logf("%d operations, %s in %s", len(h.operations), v.result, time.Since(started).Round(time.Millisecond))
	if v.result != porcupine.Illegal {
		t.Errorf("got %s, want Illegal", v.result)
	}
}
