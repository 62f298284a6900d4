package main

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
)

// verdict is the outcome of checking a whole history.
type verdict struct {
	result porcupine.CheckResult
	// family is the first family, in file order, found not linearizable (result Illegal) or
	// left without a verdict when the time ran out (result Unknown).
	family  string
	checked int // families with a verdict of Ok
}

// checker holds a history in porcupine's terms.
type checker struct {
	history    history
	model      porcupine.Model
	operations map[string][]porcupine.Operation // by family, all of them
	checked    map[string][]porcupine.Operation // by family, those that can change its verdict
}

func newChecker(h history) checker {
	c := checker{history: h, model: newModel(h.regions), operations: map[string][]porcupine.Operation{}, checked: map[string][]porcupine.Operation{}}
	regionIndex := map[string]int{}
	for i, name := range h.regions {
		regionIndex[name] = i
	}
	end := endOfRun(h.operations)
	// porcupine draws one row per client, numbered from 0: the history's ids are renumbered.
	clients := map[int64]int{}
	for _, op := range h.operations {
		if _, seen := clients[op.client]; !seen {
			clients[op.client] = len(clients)
		}
	}
	convert := func(op operation) porcupine.Operation {
		ret := op.ret
		if pending(op) {
			ret = end
		}
		return porcupine.Operation{
			ClientId: clients[op.client],
			Input:    input{family: op.family, kind: op.kind, region: regionIndex[op.region], home: regionIndex[op.home], generation: op.generation, forged: op.forged, cutOffFromHome: h.cutOffFromHome(op)},
			Output:   output{status: op.status, newGeneration: op.newGeneration},
			Call:     op.call,
			Return:   ret,
			Metadata: fmt.Sprintf("id %d, line %d, client %d", op.id, op.line, op.client),
		}
	}
	for _, family := range h.families {
		for _, op := range h.byFamily[family] {
			c.operations[family] = append(c.operations[family], convert(op))
		}
		for _, op := range checkedOperations(h.byFamily[family]) {
			c.checked[family] = append(c.checked[family], convert(op))
		}
	}
	return c
}

// pending tells whether an operation is checked as if still running at the end of the run: an
// unanswered or 5xx request may take effect after its answer (a forwarded one can commit at
// home after the forwarder gave up).
func pending(op operation) bool {
	return op.kind != opApplied && outcomeOf(op.status) == unknown
}

// endOfRun is the latest instant the history mentions.
func endOfRun(operations []operation) int64 {
	var end int64
	for i, op := range operations {
		if i == 0 || op.ret > end {
			end = op.ret
		}
	}
	return end
}

// check checks each family in file order and stops at the first that is not linearizable,
// or when the time runs out.
func (c checker) check(timeout time.Duration) verdict {
	deadline := time.Now().Add(timeout)
	v := verdict{result: porcupine.Ok}
	for _, family := range c.history.families {
		left := time.Until(deadline)
		if left <= 0 { // porcupine reads a timeout of 0 as none at all
			return verdict{result: porcupine.Unknown, family: family, checked: v.checked}
		}
		switch porcupine.CheckOperationsTimeout(c.model, c.checked[family], left) {
		case porcupine.Illegal:
			return verdict{result: porcupine.Illegal, family: family, checked: v.checked}
		case porcupine.Unknown:
			return verdict{result: porcupine.Unknown, family: family, checked: v.checked}
		}
		v.checked++
	}
	return v
}

// report is a family's operations, one line each, in file order, for the violation report.
func (c checker) report(family string) []string {
	var lines []string
	for i, op := range c.operations[family] {
		interval := fmt.Sprintf("[%d, %d]", op.Call, op.Return)
		if pending(c.history.byFamily[family][i]) {
			interval = fmt.Sprintf("[%d, pending]", op.Call)
		}
		lines = append(lines, fmt.Sprintf("%s  %s  (%s)", c.model.DescribeOperation(op.Input, op.Output), interval, op.Metadata))
	}
	return lines
}

// visualize writes porcupine's HTML page of the whole history and its linearizations.
func (c checker) visualize(path string, timeout time.Duration) error {
	var all []porcupine.Operation
	for _, family := range c.history.families {
		all = append(all, c.operations[family]...)
	}
	_, info := porcupine.CheckOperationsVerbose(c.model, all, timeout)
	return porcupine.VisualizePath(c.model, info, path)
}
