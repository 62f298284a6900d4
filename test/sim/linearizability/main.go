// Command checkhistory checks a history of Tessera's multi-region simulation for
// linearizability against the token-family model of README.md.
//
//	go run . --history FILE [--visualize OUT.html] [--timeout 60s]
//
// Exit codes: 0 linearizable, 1 not (the first violating family is named), 2 the history or
// the command line cannot be read, 3 no verdict within the timeout.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/anishathalye/porcupine"
)

const (
	exitLinearizable = 0
	exitViolation    = 1
	exitMalformed    = 2
	exitInconclusive = 3
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("checkhistory", flag.ContinueOnError)
	flags.SetOutput(stderr)
	historyPath := flags.String("history", "", "the history to check: JSON Lines, one operation a line (README.md)")
	visualization := flags.String("visualize", "", "also write porcupine's HTML visualisation here (keep it out of the repository)")
	timeout := flags.Duration("timeout", 60*time.Second, "give up without a verdict after this long (exit 3)")
	if err := flags.Parse(args); err != nil {
		return exitMalformed
	}
	if *historyPath == "" || flags.NArg() > 0 || *timeout <= 0 {
		fmt.Fprintln(stderr, "usage: checkhistory --history FILE [--visualize OUT.html] [--timeout 60s]")
		return exitMalformed
	}
	file, err := os.Open(*historyPath)
	if err != nil {
		fmt.Fprintf(stderr, "cannot read the history: %v\n", err)
		return exitMalformed
	}
	h, err := readHistory(file)
	file.Close()
	if err != nil {
		fmt.Fprintf(stderr, "malformed history %s: %v\n", *historyPath, err)
		return exitMalformed
	}

	started := time.Now()
	c := newChecker(h)
	v := c.check(*timeout)
	took := time.Since(started).Round(time.Millisecond)
	if *visualization != "" {
		if err := c.visualize(*visualization, *timeout); err != nil {
			fmt.Fprintf(stderr, "cannot write the visualisation: %v\n", err)
		}
	}

	switch v.result {
	case porcupine.Ok:
		fmt.Fprintf(stdout, "linearizable: %d operations over %d families and %d regions checked in %s\n", len(h.operations), len(h.families), len(h.regions), took)
		return exitLinearizable
	case porcupine.Illegal:
		fmt.Fprintf(stdout, "not linearizable: family %s (%d operations; %d families before it in the file are linearizable) after %s:\n", v.family, len(h.byFamily[v.family]), v.checked, took)
		for _, line := range c.report(v.family) {
			fmt.Fprintf(stdout, "  %s\n", line)
		}
		return exitViolation
	default:
		fmt.Fprintf(stdout, "inconclusive: no verdict on family %s within %s; the %d families before it in the file are linearizable\n", v.family, *timeout, v.checked)
		return exitInconclusive
	}
}
