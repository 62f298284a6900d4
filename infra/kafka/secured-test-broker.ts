import type { KafkaSecurityOptions } from './broker-security.js';

/**
 * The secured broker one test run shares (test/support/kafka-global-setup.ts): one user per
 * mechanism and role, one client certificate. Nobody but admin may do anything until a test
 * grants it ACLs on its own topic.
 */
export const securedTestBrokerSecurity: KafkaSecurityOptions = {
  users: {
    // Publishes (SCRAM-SHA-512, what production uses).
    relay: ['SCRAM-SHA-512'],
    // Reads only: its ACLs allow consuming, never producing.
    reader: ['SCRAM-SHA-512'],
    verifier: ['SCRAM-SHA-256'],
    downstream: ['PLAIN'],
    // MirrorMaker 2 reading a source region.
    mirror: ['SCRAM-SHA-512'],
  },
  tlsClients: ['mtls-relay'],
  // Logins with tokens from a test issuer, for the feed's oauthBearerProvider hook.
  oauthBearer: true,
};
