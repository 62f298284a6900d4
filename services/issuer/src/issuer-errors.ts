/** Why the issuer refused a request. All of them are 401 at the HTTP layer (spec section 7). */
export type IssuerRefusalCode =
  | 'ERR_INVALID_CLIENT'
  | 'ERR_REFRESH_TOKEN_INVALID'
  | 'ERR_REFRESH_TOKEN_USED'
  | 'ERR_REFRESH_TOKEN_REVOKED'
  | 'ERR_REFRESH_TOKEN_EXPIRED'
  | 'ERR_CREDENTIAL_REVOKED';

export class IssuerRefusal extends Error {
  constructor(
    readonly code: IssuerRefusalCode,
    message: string,
  ) {
    super(message);
    this.name = 'IssuerRefusal';
  }
}
