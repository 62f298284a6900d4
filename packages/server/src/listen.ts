import type { FastifyInstance } from 'fastify';
import { errorCode } from '@tessera/contracts';
import { StartFailure } from '@tessera/host';

const reasons: Record<string, string> = {
  EADDRINUSE: 'the port is already in use',
  EACCES: 'permission denied (a port below 1024 needs privileges)',
  EADDRNOTAVAIL: 'the address is not on this host',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved now',
  EAI_FAIL: 'the host name does not resolve',
};

/** Listens, or fails with a StartFailure naming the variables, the address and the reason. */
export async function listenOrExplain(
  app: FastifyInstance,
  target: { host: string; port: number; variable: string; hostVariable?: string },
): Promise<string> {
  try {
    return await app.listen({ host: target.host, port: target.port });
  } catch (error) {
    const code = errorCode(error) ?? '';
    const reason = reasons[code] ?? (error instanceof Error ? error.message : String(error));
    throw new StartFailure(`cannot listen on ${target.host}:${target.port} (${target.variable}, ${target.hostVariable ?? 'TESSERA_HOST'}): ${reason}${code ? ` [${code}]` : ''}`, {
      cause: error,
    });
  }
}
