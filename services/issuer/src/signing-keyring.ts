import type { SigningKeyEvent } from '@tessera/contracts';
import type { EventStore } from '@tessera/event-store';
import { streams } from '@tessera/contracts';
import { generateSigningKey, signingKeyFromJwk, type KeyFolder, type SigningKey } from '@tessera/tokens';

/**
 * Which private key this issuer signs with: the newest published, unretired key whose
 * private half is in this issuer's key folder. Public halves travel as events, so every
 * verifier learns a new key from the log; private halves never leave the folder.
 */
export class SigningKeyring {
  private readonly published: string[] = [];
  private readonly retired = new Set<string>();
  private signingKey: SigningKey | undefined;

  constructor(private readonly folder: KeyFolder) {}

  apply(event: SigningKeyEvent): void {
    if (event.type === 'SigningKeyRetired') {
      this.retired.add(event.kid);
      if (this.signingKey?.kid === event.kid) this.signingKey = undefined;
      this.pickNewest();
      return;
    }
    this.published.push(event.kid);
    this.pickNewest();
  }

  current(): SigningKey {
    if (!this.signingKey) throw new Error('no signing key: the issuer is not ready');
    return this.signingKey;
  }

  get ready(): boolean {
    return this.signingKey !== undefined;
  }

  /** Publishes a key when this issuer has none it can sign with (first start, or a new host). */
  async ensureKey(store: EventStore, nowSeconds: number): Promise<SigningKeyEvent | undefined> {
    if (this.signingKey) return undefined;
    const event = await createSigningKey(this.folder, nowSeconds);
    await store.append(streams.signingKeys(), [{ event, metadata: { actor: 'issuer' } }], { expectedRevision: 'any' });
    this.apply(event);
    return event;
  }

  private pickNewest(): void {
    for (let i = this.published.length - 1; i >= 0; i -= 1) {
      const kid = this.published[i]!;
      if (this.retired.has(kid)) continue;
      if (this.signingKey?.kid === kid) return;
      const privateJwk = this.folder.loadPrivateKey(kid);
      if (privateJwk) {
        this.signingKey = signingKeyFromJwk(kid, privateJwk);
        return;
      }
    }
  }
}

/** Makes a key pair, keeps the private half in the folder, returns the event that publishes the public half. */
export async function createSigningKey(folder: KeyFolder, nowSeconds: number): Promise<SigningKeyEvent> {
  const { kid, privateJwk } = await generateSigningKey();
  folder.savePrivateKey(kid, privateJwk);
  const { kty, crv, x, y } = privateJwk;
  return { type: 'SigningKeyPublished', v: 1, kid, alg: 'ES256', publicJwk: { kty, crv, x, y }, at: nowSeconds };
}
