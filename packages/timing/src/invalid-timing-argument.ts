/**
 * A clock or a backoff asked for what it cannot do (time running backwards, a backoff whose cap is
 * below its start): the caller's bug. A RangeError, as it always was, with the code every Tessera
 * error carries (`ERR_INVALID_ARGUMENT`, an ErrorCode of @tessera/contracts); declared here
 * because this package is published with no dependencies.
 */
export class InvalidTimingArgument extends RangeError {
  override readonly name = 'InvalidTimingArgument';
  readonly code = 'ERR_INVALID_ARGUMENT';
}
