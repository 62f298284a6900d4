package main

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

const getLine = `{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}`

func TestReadHistoryKeepsEveryField(t *testing.T) {
	h, err := readHistory(strings.NewReader(getLine + "\n\n" +
		`{"id":2,"client":7,"region":"b","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":20,"return":30}` + "\n" +
		`{"id":3,"client":8,"region":"b","family":"a_f","op":"revoke","forged":true,"status":401,"call":40,"return":50}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []operation{
		{line: 1, id: 1, client: 1, region: "a", family: "a_f", home: "a", kind: opGet, generation: -1, status: 200, newGeneration: -1, call: 0, ret: 10},
		{line: 3, id: 2, client: 7, region: "b", family: "a_f", home: "a", kind: opRefresh, generation: 0, status: 200, newGeneration: 1, call: 20, ret: 30},
		{line: 4, id: 3, client: 8, region: "b", family: "a_f", home: "a", kind: opRevoke, generation: -1, forged: true, status: 401, newGeneration: -1, call: 40, ret: 50},
	}
	if len(h.operations) != len(want) {
		t.Fatalf("got %d operations, want %d", len(h.operations), len(want))
	}
	for i := range want {
		if h.operations[i] != want[i] {
			t.Errorf("operation %d: got %+v, want %+v", i, h.operations[i], want[i])
		}
	}
	if strings.Join(h.regions, ",") != "a,b" || strings.Join(h.families, ",") != "a_f" {
		t.Errorf("regions %v, families %v", h.regions, h.families)
	}
}

func TestReadHistoryNamesTheLineOfAMalformedOperation(t *testing.T) {
	cases := []struct {
		name, line, want string
	}{
		{"not JSON", `{"id":2,`, "not a JSON object"},
		{"an unknown field", `{"id":2,"client":1,"region":"a","family":"a_f","op":"charge","generation":0,"status":200,"call":1,"return":2,"new_gen":1}`, `unknown field "new_gen"`},
		{"two values", `{"id":2,"client":1,"region":"a","family":"a_f","op":"charge","generation":0,"status":200,"call":1,"return":2} {}`, "more than one JSON value"},
		{"a missing field", `{"id":2,"client":1,"region":"a","op":"charge","generation":0,"status":200,"call":1,"return":2}`, "family is missing"},
		{"a fractional time", `{"id":2,"client":1,"region":"a","family":"a_f","op":"charge","generation":0,"status":200,"call":1.5,"return":2}`, "not a JSON object"},
		{"an unknown op", `{"id":2,"client":1,"region":"a","family":"a_f","op":"rotate","generation":0,"status":200,"call":1,"return":2}`, `op "rotate"`},
		{"a region code with capitals", `{"id":2,"client":1,"region":"EU","family":"a_f","op":"charge","generation":0,"status":200,"call":1,"return":2}`, "not a region code"},
		{"a family without its home region", `{"id":2,"client":1,"region":"a","family":"Xyz","op":"charge","generation":0,"status":200,"call":1,"return":2}`, "home region"},
		{"return before call", `{"id":2,"client":1,"region":"a","family":"a_f","op":"charge","generation":0,"status":200,"call":3,"return":2}`, "return is before call"},
		{"a reused id", `{"id":1,"client":1,"region":"a","family":"a_f","op":"charge","generation":0,"status":200,"call":1,"return":2}`, "id 1 is already used on line 1"},
		{"a charge without generation", `{"id":2,"client":1,"region":"a","family":"a_f","op":"charge","status":200,"call":1,"return":2}`, "needs the generation"},
		{"a negative generation", `{"id":2,"client":1,"region":"a","family":"a_f","op":"charge","generation":-1,"status":200,"call":1,"return":2}`, "0 or more"},
		{"an applied with a generation", `{"id":2,"client":1,"region":"a","family":"a_f","op":"applied","generation":0,"call":1,"return":2}`, "applied has no generation"},
		{"an applied with a status", `{"id":2,"client":1,"region":"a","family":"a_f","op":"applied","status":200,"call":1,"return":2}`, "applied has no status"},
		{"a forged charge", `{"id":2,"client":1,"region":"a","family":"a_f","op":"charge","generation":0,"forged":true,"status":401,"call":1,"return":2}`, "forged belongs to refresh and revoke"},
		{"a refresh without status", `{"id":2,"client":1,"region":"a","family":"a_f","op":"refresh","generation":0,"call":1,"return":2}`, "needs a status"},
		{"a 302", `{"id":2,"client":1,"region":"a","family":"a_f","op":"charge","generation":0,"status":302,"call":1,"return":2}`, "status 302"},
		{"an isolated line naming a family", `{"id":2,"client":0,"region":"a","family":"a_f","op":"isolated","call":1,"return":2}`, "isolated has only"},
		{"an isolated line with a status", `{"id":2,"client":0,"region":"a","op":"isolated","status":200,"call":1,"return":2}`, "isolated has only"},
		{"an isolated line without its end", `{"id":2,"client":0,"region":"a","op":"isolated","call":1}`, "return is missing"},
		{"an isolated line that ends before it starts", `{"id":2,"client":0,"region":"a","op":"isolated","call":3,"return":2}`, "return is before call"},
		{"a failed get", `{"id":2,"client":1,"region":"a","family":"a_g","op":"get","status":503,"call":1,"return":2}`, "get must be answered 200"},
		{"a refresh 200 without new_generation", `{"id":2,"client":1,"region":"a","family":"a_f","op":"refresh","generation":0,"status":200,"call":1,"return":2}`, "needs new_generation"},
		{"a refresh 401 with new_generation", `{"id":2,"client":1,"region":"a","family":"a_f","op":"refresh","generation":0,"status":401,"new_generation":1,"call":1,"return":2}`, "only a refresh answered 200"},
		{"a family without its get", `{"id":2,"client":1,"region":"a","family":"a_g","op":"charge","generation":0,"status":200,"call":1,"return":2}`, "family a_g has no get"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readHistory(strings.NewReader(getLine + "\n" + c.line + "\n"))
			var malformed *malformedError
			if !errors.As(err, &malformed) {
				t.Fatalf("got %v, want a malformed history", err)
			}
			if malformed.line != 2 || !strings.Contains(malformed.message, c.want) {
				t.Errorf("got %q, want line 2 and %q", err, c.want)
			}
		})
	}
}

func TestTheReadmeExampleIsALinearizableHistory(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, found := strings.Cut(string(readme), "Example:\n\n```json\n")
	example, _, closed := strings.Cut(after, "```")
	if !found || !closed {
		t.Fatal("README.md has no example history")
	}
	if v := checkText(t, example); v.result != porcupine.Ok {
		t.Errorf("got %s on family %s", v.result, v.family)
	}
}
