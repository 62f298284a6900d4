/**
 * The `code` a thrown value carries, if it is a string: Node's system errors (`ENOENT`,
 * `EADDRINUSE`), its argument errors (`ERR_PARSE_ARGS_…`), SQLite's (`SQLITE_BUSY`) and Tessera's
 * own all name their cause there. Read by shape, not by class, because a `catch` gets `unknown`.
 */
export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}
