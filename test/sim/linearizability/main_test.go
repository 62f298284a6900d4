package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The command as CI runs it: built with go build, then run, so its exit codes are its own
// (go run reports every failure as exit 1). No VCS stamp: the checkout may belong to another user.

func buildCommand(t *testing.T) string {
	t.Helper()
	binary := filepath.Join(t.TempDir(), "checkhistory")
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", binary, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return binary
}

func runCommand(t *testing.T, binary string, history string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.jsonl")
	if err := os.WriteFile(path, []byte(history), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	command := exec.Command(binary, append([]string{"--history", path}, args...)...)
	command.Stdout, command.Stderr = &out, &errOut
	err := command.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

const linearizable = `{"id":1,"client":1,"region":"a","family":"a_f","op":"get","status":200,"call":0,"return":10}
{"id":2,"client":1,"region":"b","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":20,"return":30}
{"id":3,"client":2,"region":"b","family":"b_g","op":"get","status":200,"call":20,"return":30}
`

func TestCommandExitCodes(t *testing.T) {
	binary := buildCommand(t)

	t.Run("0 and a one-line summary for a linearizable history", func(t *testing.T) {
		code, stdout, _ := runCommand(t, binary, linearizable)
		if code != 0 || !strings.HasPrefix(stdout, "linearizable: 3 operations over 2 families and 2 regions checked in ") || strings.Count(stdout, "\n") != 1 {
			t.Errorf("exit %d, stdout %q", code, stdout)
		}
	})

	t.Run("1 naming the violating family and listing its operations", func(t *testing.T) {
		code, stdout, _ := runCommand(t, binary, linearizable+
			`{"id":4,"client":3,"region":"a","family":"a_f","op":"refresh","generation":0,"status":200,"new_generation":1,"call":40,"return":50}`+"\n")
		want := []string{
			"not linearizable: family a_f (3 operations; 0 families before it in the file are linearizable)",
			"  get in a → 200  [0, 10]  (id 1, line 1, client 1)",
			"  refresh g0 in b → 200 g1  [20, 30]  (id 2, line 2, client 1)",
			"  refresh g0 in a → 200 g1  [40, 50]  (id 4, line 4, client 3)",
		}
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		if code != 1 || len(lines) != len(want) || !strings.HasPrefix(lines[0], want[0]) || strings.Join(lines[1:], "\n") != strings.Join(want[1:], "\n") {
			t.Errorf("exit %d, stdout:\n%s", code, stdout)
		}
	})

	t.Run("2 naming the line of a malformed history", func(t *testing.T) {
		code, stdout, stderr := runCommand(t, binary, linearizable+`{"id":4,"client":3,"region":"a","family":"a_f","op":"refresh","status":200,"call":40,"return":50}`+"\n")
		if code != 2 || stdout != "" || !strings.Contains(stderr, "line 4: refresh needs the generation of the token presented") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})

	t.Run("2 without --history", func(t *testing.T) {
		out, err := exec.Command(binary).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "usage: checkhistory --history FILE") {
			t.Errorf("%v: %s", err, out)
		}
	})

	t.Run("3 when the timeout leaves no time for a verdict", func(t *testing.T) {
		code, stdout, _ := runCommand(t, binary, linearizable, "--timeout", "1ns")
		if code != 3 || !strings.HasPrefix(stdout, "inconclusive: no verdict on family a_f within 1ns") {
			t.Errorf("exit %d, stdout %q", code, stdout)
		}
	})

	t.Run("--visualize writes porcupine's page with the operations", func(t *testing.T) {
		page := filepath.Join(t.TempDir(), "history.html")
		code, _, stderr := runCommand(t, binary, linearizable, "--visualize", page)
		html, err := os.ReadFile(page)
		if code != 0 || err != nil || !bytes.Contains(html, []byte("<html")) || !bytes.Contains(html, []byte("refresh g0 in b")) {
			t.Errorf("exit %d, stderr %q, read %v, %d bytes", code, stderr, err, len(html))
		}
	})
}
