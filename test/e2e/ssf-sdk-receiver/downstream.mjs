// A downstream fastify service that is not on Kafka: it verifies Tessera's access tokens with
// @tessera/verification and hears revocations and rotations through the package's Shared Signals
// receiver, polled (MODE=poll) or pushed to its own /ssf/events route (MODE=push). Plain
// JavaScript against the built package, as a user's service would run it. Tessera's self-signed
// certificate is trusted with NODE_EXTRA_CA_CERTS, so the global fetch reaches the transmitter.
import Fastify from 'fastify';
import { PublicKeySet, createBearerVerifier, createKeyRefresh, createSsfReceiver, loadJwks, ssfPushRoute, tesseraAuth } from '@tessera/verification';

const { TRANSMITTER_URL, RECEIVER_TOKEN, MODE, PORT, ACCOUNT_ID, STATE_FILE, PUSH_SECRET } = process.env;
const startedAt = performance.now();
const endpointUrl = `http://127.0.0.1:${PORT}/ssf/events`;

const receiver = createSsfReceiver({
  transmitterUrl: TRANSMITTER_URL,
  receiverToken: RECEIVER_TOKEN,
  delivery: MODE === 'push' ? { method: 'push', endpointUrl, authorizationHeader: `Bearer ${PUSH_SECRET}` } : { method: 'poll' },
  subjects: { accounts: [ACCOUNT_ID] },
  stateFile: STATE_FILE,
  // Errors the receiver recovers from by itself; their messages never carry the receiver token.
  onError: (error) => console.error(JSON.stringify({ receiverError: error.message })),
});

const jwksUrl = `${TRANSMITTER_URL}/.well-known/jwks.json`;
const keys = new PublicKeySet();
await loadJwks(jwksUrl, keys);
const verifier = createBearerVerifier({
  keys,
  projection: receiver.projection,
  issuer: 'urn:tessera:issuer',
  now: () => Math.floor(Date.now() / 1000),
  refreshKeys: createKeyRefresh(() => loadJwks(jwksUrl, keys), { cooldownMs: 5000 }),
});

const app = Fastify();
await app.register(tesseraAuth, { verifier });
if (MODE === 'push') await app.register(ssfPushRoute, { receiver, path: '/ssf/events' });
app.get('/orders', { config: { tessera: { interface: 'v5' } } }, async (request) => ({ account: request.tesseraClaims.sub }));
await app.listen({ host: '127.0.0.1', port: Number(PORT) });
console.log(JSON.stringify({ listening: Number(PORT) }));
// Before ready, revocations applied from the state file are refused already; ready says the catch-up is done.
await receiver.ready;
console.log(JSON.stringify({ ready: true, streamId: receiver.streamId, readyMs: Math.round(performance.now() - startedAt) }));

process.once('SIGTERM', () => {
  void receiver
    .close()
    .then(() => app.close())
    .then(() => process.exit(0));
});
