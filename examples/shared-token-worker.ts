/**
 * One of several processes that share one token pair through a FileTokenLock: run it twice
 * at once with the same TESSERA_TOKEN_STATE and the processes take turns refreshing, each
 * adopting the pair the other stored instead of refreshing with a used refresh token.
 *
 *   TESSERA_BASE_URL=… TESSERA_API_LOGIN_ID=… TESSERA_TRANSACTION_KEY=… \
 *   TESSERA_TOKEN_STATE=/run/tessera/pair.json TESSERA_RUN_SECONDS=5 \
 *   node --import tsx examples/shared-token-worker.ts
 *
 * It charges (the example route moves no money) back to back for TESSERA_RUN_SECONDS and
 * prints one JSON line: how many charges, the status of each final answer, and any errors
 * by code. A refresh by one process invalidates the access token the other holds, so the
 * charge opts in to the single retry after a 401.
 */
import { FileTokenLock, TesseraClient, TesseraError } from '@tessera/client';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set`);
    process.exit(2);
  }
  return value;
}

const client = new TesseraClient({
  baseUrl: required('TESSERA_BASE_URL'),
  apiLoginId: required('TESSERA_API_LOGIN_ID'),
  transactionKey: required('TESSERA_TRANSACTION_KEY'),
  lock: new FileTokenLock({ statePath: required('TESSERA_TOKEN_STATE') }),
});

const until = Date.now() + Number(process.env.TESSERA_RUN_SECONDS ?? '5') * 1000;
const statuses: Record<string, number> = {};
const errors: Record<string, number> = {};
let charges = 0;
while (Date.now() < until) {
  charges += 1;
  try {
    const response = await client.fetch('/v5/Transaction/charge', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"amount":"1.00"}',
      retryNonIdempotent: true,
    });
    await response.body?.cancel();
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  } catch (error) {
    const code = error instanceof TesseraError ? error.code : 'unknown';
    errors[code] = (errors[code] ?? 0) + 1;
  }
}
console.log(JSON.stringify({ pid: process.pid, charges, statuses, errors }));
// No close(): that would revoke the pair the other processes still use.
