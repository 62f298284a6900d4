// Not a test file of its own: the entry a thread-requests test loads as its background thread.
// It answers each request with its id, except one marked silent, which it holds forever, as a
// thread starved of CPU or stuck on one slow row would.
import { parentPort } from 'node:worker_threads';

parentPort?.on('message', (request: { readonly id: number; readonly silent?: boolean; readonly close?: boolean }) => {
  if (request.close) process.exit(0);
  if (!request.silent) parentPort?.postMessage({ id: request.id, answered: true });
});
