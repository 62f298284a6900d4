/**
 * Charges once through @tessera/client.
 *
 *   TESSERA_BASE_URL=https://localhost:8443 TESSERA_API_LOGIN_ID=… TESSERA_TRANSACTION_KEY=… \
 *   node --import tsx examples/charge.ts
 *
 * Against a development server with its self-signed certificate, let Node trust it:
 * NODE_EXTRA_CA_CERTS=data/tls/self-signed.crt (read at start-up, so set it on the command).
 */
import { TesseraClient, TesseraError } from '@tessera/client';

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
});

try {
  const response = await client.fetch('/v5/Transaction/charge', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount: '1.00' }),
  });
  // 403 (no transaction:charge permission) and other refusals come back as a Response.
  console.log(response.status, await response.text());
  process.exitCode = response.ok ? 0 : 1;
} catch (error) {
  // Messages of TesseraError never contain the key or a token, so they are safe to log.
  console.error(error instanceof TesseraError ? `${error.code}: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  // Revokes the refresh token: nothing usable outlives the script.
  await client.close().catch((error: unknown) => console.error('close failed:', error instanceof TesseraError ? error.code : error));
}
