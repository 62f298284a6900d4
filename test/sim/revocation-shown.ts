/** What the workload knows of a family's refreshes at one instant. */
export interface RefreshesSeen {
  /** Refreshes of the family sent and not yet answered. */
  readonly inFlight: number;
  /** Refreshes of the family sent so far. */
  readonly started: number;
}

/** A charge with one of a family's access tokens, and what the workload knew around it. */
export interface ChargeWitness {
  readonly status: number | undefined;
  readonly presentedGeneration: number;
  /** When the charge was sent. */
  readonly before: RefreshesSeen;
  /** When its answer came, with the family as the workload knew it then. */
  readonly after: RefreshesSeen & {
    /** A revoke of the family was answered 200, or may have committed (no answer, 5xx). */
    readonly revokeSent: boolean;
    /** A refresh of the newest known token may have committed unseen. */
    readonly rotatedUnseen: boolean;
    readonly newestGeneration: number;
  };
}

/**
 * Whether a charge's 401 shows the family's revocation applied in the region that answered:
 * only a revocation refuses the newest access token of a family whose every rotation the workload
 * has seen. The verifier also refuses a generation that a rotation has replaced, so a refresh in
 * flight at any moment of the charge may have made the 401 before its answer told the workload of
 * the new generation: such a 401 shows nothing.
 */
export function showsRevocationApplied(charge: ChargeWitness): boolean {
  const { before, after } = charge;
  // None in flight when it was sent and none started since: so none was in flight when it came back either.
  const noRefreshDuring = before.inFlight === 0 && after.started === before.started;
  return charge.status === 401 && after.revokeSent && !after.rotatedUnseen && charge.presentedGeneration === after.newestGeneration && noRefreshDuring;
}
