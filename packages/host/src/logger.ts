import type { LoggerOptions } from 'pino';

/**
 * JSON lines through pino. Bodies are never logged; the Authorization header and every
 * field that can hold a secret are censored should anything put them in a log line.
 */
export const redactedPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.authorization',
  '*.transaction_key',
  '*.transactionKey',
  '*.refresh_token',
  '*.refreshToken',
  '*.token',
  '*.apikey',
  '*.apiKey',
  '*.authentication_token',
  '*.admin_token',
  '*.adminToken',
  'body',
  '*.body',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    serializers: {
      req: (request: { method: string; url: string; id: string; ip?: string }) => ({
        method: request.method,
        // Query strings can carry tokens from careless clients: log the path only.
        url: request.url.split('?')[0],
        id: request.id,
        remoteAddress: request.ip,
      }),
    },
  };
}
