package main

import "sort"

// checkedOperations is a family's operations less those that cannot change its verdict.
// porcupine tries the concurrent operations of a family in every order before it calls it not
// linearizable, and a pending request is concurrent with everything after its call: a dozen
// retried 503s would make that search take minutes. Left out, each with the reason it cannot
// matter:
//
//   - an operation the model allows from every state and that changes nothing: a refused
//     request, a charge not answered 200, a forged token not answered 200. It fits anywhere in
//     any linearization of the others.
//   - a pending refresh presenting a generation that a refresh answered 200 also presented:
//     only one refresh can move a generation on, and that one is the 200.
//   - a pending refresh presenting the same generation as one called earlier: at most one of
//     them commits, and the earlier one can commit whenever the later one could.
//   - a pending revoke presenting a generation no lower than one called earlier in the same
//     region: the earlier one can commit whenever the later one could, with the same effect;
//     and a second revocation only adds regions that refuse the family, which no operation
//     needs, so a linearization in which both commit still holds with only the first doing so.
func checkedOperations(operations []operation) []operation {
	won := map[int]bool{} // generations a refresh answered 200 moved on
	for _, op := range operations {
		if op.kind == opRefresh && op.status == 200 && !op.forged {
			won[op.generation] = true
		}
	}
	byCall := append([]operation(nil), operations...)
	sort.SliceStable(byCall, func(i, j int) bool { return byCall[i].call < byCall[j].call })
	refreshKept := map[int]bool{}        // generations presented by a pending refresh kept
	lowestRevokeKept := map[string]int{} // by region: the lowest generation of a pending revoke kept
	var checked []operation
	for _, op := range byCall {
		switch {
		case changesNothing(op):
			continue
		case pending(op) && op.kind == opRefresh:
			if won[op.generation] || refreshKept[op.generation] {
				continue
			}
			refreshKept[op.generation] = true
		case pending(op) && op.kind == opRevoke:
			if lowest, kept := lowestRevokeKept[op.region]; kept && lowest <= op.generation {
				continue
			}
			lowestRevokeKept[op.region] = op.generation
		}
		checked = append(checked, op)
	}
	return checked
}

// changesNothing tells whether step leaves every state as it is for this operation.
func changesNothing(op operation) bool {
	switch op.kind {
	case opCharge:
		return op.status != 200
	case opRefresh, opRevoke:
		return outcomeOf(op.status) == refused || op.forged && op.status != 200
	}
	return false
}
