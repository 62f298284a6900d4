import type { FastifyInstance } from 'fastify';

/**
 * The methods each route path answers, learnt as routes are registered, so a request for a known
 * path with another method gets RFC 9110's 405 and `Allow` instead of a 404. Must be installed
 * before the routes: fastify tells an onRoute hook only about routes registered after it.
 */
export function trackRouteMethods(app: FastifyInstance): { allowedMethods(path: string): string[] } {
  const routes: { readonly matches: (path: string) => boolean; readonly methods: Set<string> }[] = [];
  const byUrl = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const url = withoutTrailingSlash(route.url);
    let methods = byUrl.get(url);
    if (!methods) {
      methods = new Set();
      byUrl.set(url, methods);
      routes.push({ matches: matcher(url), methods });
    }
    for (const method of [route.method].flat()) methods.add(method.toUpperCase());
  });
  return {
    allowedMethods(path) {
      const normalized = withoutTrailingSlash(path);
      const allowed = new Set<string>();
      for (const route of routes) if (route.matches(normalized)) for (const method of route.methods) allowed.add(method);
      return [...allowed].sort();
    },
  };
}

// The router ignores a trailing slash (routerOptions.ignoreTrailingSlash), and so does this.
const withoutTrailingSlash = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);

/** A static path compares as it is; `:name` matches one segment and `*` the rest, as in fastify. */
function matcher(url: string): (path: string) => boolean {
  if (!url.includes(':') && !url.includes('*')) return (path) => path === url;
  const source = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  const pattern = new RegExp(`^${source}$`);
  return (path) => pattern.test(path);
}
