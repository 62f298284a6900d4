import { publicUrlOf } from '@tessera/config';
import type { Host } from './host.js';

export interface TokenIssuers {
  /**
   * The OAuth 2.0 door's issuer identifier (RFC 8414), the `iss` of its tokens: TESSERA_PUBLIC_URL,
   * or the default built from the port the public listener bound.
   */
  readonly oauth: () => string;
  /**
   * Every `iss` a Tessera verifier in this process accepts: TESSERA_ISSUER (the v5 and v1 tokens'),
   * the OAuth door's, and TESSERA_ACCEPTED_ISSUERS (other regions' OAuth doors). A separate
   * verifier knows the OAuth door's only from TESSERA_PUBLIC_URL, set to the issuer's, so without
   * it a verifier accepts TESSERA_ISSUER (and TESSERA_ACCEPTED_ISSUERS) alone.
   */
  readonly accepted: () => readonly string[];
}

/**
 * The two `iss` values Tessera's tokens carry (docs/decisions/0025), derived in one place for the
 * issuer that stamps them and the verifier that accepts them. A port of 0 is known only once the
 * public listener bound it, so the values are functions; where the URL is fixed at start they
 * return the same array every time.
 */
export function tokenIssuers(host: Pick<Host, 'config' | 'listeners' | 'role'>): TokenIssuers {
  const { config } = host;
  const oauth = () => publicUrlOf(config, host.listeners.ports().public);
  // Other regions' OAuth issuers (TESSERA_ACCEPTED_ISSUERS): their tokens are good here too.
  const others = config.TESSERA_ACCEPTED_ISSUERS ?? [];
  if (config.TESSERA_PUBLIC_URL !== undefined || (host.role !== 'verifier' && config.TESSERA_PORT !== 0)) {
    const fixed = [config.TESSERA_ISSUER, publicUrlOf(config), ...others] as const;
    return { oauth, accepted: () => fixed };
  }
  if (host.role === 'verifier') {
    const fixed = [config.TESSERA_ISSUER, ...others] as const;
    return { oauth, accepted: () => fixed };
  }
  return { oauth, accepted: () => [config.TESSERA_ISSUER, oauth(), ...others] };
}
