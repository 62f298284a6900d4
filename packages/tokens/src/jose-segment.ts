/**
 * A JOSE segment (a JWT's header or payload) decoded to a JSON object, or undefined for anything
 * else: bad base64url, bad JSON, or a value that is not an object. Access tokens and DPoP proofs
 * read their segments the same way.
 */
export function jsonObjectOf(encoded: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
