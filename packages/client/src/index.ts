export { TesseraClient, type TesseraClientOptions } from './tessera-client.js';
export { LegacyTesseraClient, type LegacyTesseraClientOptions } from './legacy-tessera-client.js';
export type { TesseraFetchInit } from './authorized-fetch.js';
export { InMemoryTokenLock, type TokenLock } from './token-lock.js';
export { FileTokenLock, type FileTokenLockOptions } from './file-token-lock.js';
export type { StoredTokenPair } from './token-pair.js';
export type { FetchLike } from './transport.js';
export {
  TesseraError,
  InvalidCredentialsError,
  RateLimitedError,
  NetworkError,
  ServerError,
  BadRequestError,
  ForbiddenError,
  UnsafeTokenFileError,
  InvalidOptionError,
  type TesseraErrorCode,
  type TesseraOperation,
} from './errors.js';
