import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { trackRouteMethods } from './route-methods.js';

describe('trackRouteMethods', () => {
  it('knows the methods of static, parametric and prefixed paths, HEAD included with GET, and nothing of other paths', async () => {
    const app = Fastify();
    const routes = trackRouteMethods(app);
    app.get('/things', async () => []);
    app.post('/things', async () => ({}));
    await app.register(
      async (scope) => {
        scope.post('/accounts/:id/revoke', async () => ({}));
      },
      { prefix: '/admin' },
    );
    await app.ready();
    expect(routes.allowedMethods('/things')).toEqual(['GET', 'HEAD', 'POST']);
    expect(routes.allowedMethods('/things/')).toEqual(['GET', 'HEAD', 'POST']);
    expect(routes.allowedMethods('/admin/accounts/acct_1/revoke')).toEqual(['POST']);
    expect(routes.allowedMethods('/admin/accounts/a/b/revoke')).toEqual([]);
    expect(routes.allowedMethods('/elsewhere')).toEqual([]);
    await app.close();
  });
});
