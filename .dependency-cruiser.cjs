// Tessera's layering, as rules CI checks (`npm run layering`). docs/architecture.md's package map is
// generated from the same rules and the same cruise (`npm run architecture`), so the map cannot drift.
//
// The rooms: `packages/` holds libraries only; `services/` holds the runnable roles, each a `main` and
// its role's wiring (its composition root), run on a host. The published packages
// are the ones downstream teams install.
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

/** The published packages: every package under packages/ whose package.json is not private. */
const published = readdirSync(join(__dirname, 'packages')).filter((name) => JSON.parse(readFileSync(join(__dirname, 'packages', name, 'package.json'), 'utf8')).private !== true);
const publishedPath = `^packages/(${published.join('|')})/`;

/** The one wiring two services share: the issuer process, with or without a verifier beside it. */
const sharedIssuerProcess = 'services/issuer/src/issuer-process\\.ts';
/** The libraries of the roles, which the services compose: none of them wires another in. */
const roleLibraries = 'issuer|verifier|relay|ssf|mirror|admin';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'library-imports-no-service',
      comment: 'A library (packages/) never imports a service (services/): services are composition roots, and nothing builds on them.',
      severity: 'error',
      from: { path: '^packages/' },
      to: { path: '^services/' },
    },
    {
      name: 'service-imports-no-other-service',
      comment: 'A service never imports another service, but for the one declared shared wiring: the issuer process (services/issuer/src/issuer-process.ts), which `tessera issuer` runs alone and `tessera start` runs with a verifier, so the two are never written twice.',
      severity: 'error',
      from: { path: '^services/([^/]+)/', pathNot: '^services/cli/' },
      to: { path: '^services/', pathNot: ['^services/$1/', `^${sharedIssuerProcess}$`] },
    },
    {
      name: 'role-libraries-compose-no-role',
      comment: 'A role\'s library (issuer, verifier, relay, ssf, mirror, admin) exposes parts and declares the small interfaces it needs; it never imports another role\'s library to wire it in: the services do the wiring.',
      severity: 'error',
      from: { path: `^packages/(${roleLibraries})/` },
      to: { path: `^packages/(${roleLibraries})/`, pathNot: '^packages/$1/' },
    },
    {
      name: 'cli-loads-mains-lazily',
      comment: 'The CLI is the one dispatcher: it may load a role\'s main, but only with import() by subcommand, so an admin command loads no server.',
      severity: 'error',
      from: { path: '^services/cli/' },
      to: { path: '^services/(?!cli/)', dependencyTypesNot: ['dynamic-import'] },
    },
    {
      name: 'domain-is-pure',
      comment: 'The domain decides and evolves, with time passed in: it imports the events (public and internal) and nothing with I/O.',
      severity: 'error',
      from: { path: '^packages/domain/' },
      to: { pathNot: ['^packages/(domain|contracts|events)/', '^(node:)?crypto$'] },
    },
    {
      name: 'published-needs-only-published',
      comment: 'What downstream teams install depends only on other published packages: never on the kernel, the server or a role.',
      severity: 'error',
      from: { path: publishedPath },
      to: { path: '^packages/', pathNot: publishedPath },
    },
    {
      name: 'kernel-knows-no-http',
      comment: 'The runtime kernel (host) carries no web framework: a read model, a relay or a follower runs on it in a worker or a CLI.',
      severity: 'error',
      from: { path: '^packages/host/' },
      to: { path: ['^packages/(server|http)/', 'node_modules/(fastify|@fastify)'] },
    },
    {
      name: 'followers-need-no-http',
      comment: 'The audit index, the mirror followers and the relay depend on the kernel, not on HTTP.',
      severity: 'error',
      from: { path: '^packages/(audit|mirror|relay)/' },
      to: { path: ['^packages/server/', 'node_modules/(fastify|@fastify)'] },
    },
    {
      name: 'archive-reads-alone',
      comment: 'The archive (format, manifest, verification, reads) imports no other Tessera package but the error codes (@tessera/contracts/errors, a module without imports): it reads archived rows by field, so an auditor\'s copy of it needs nothing of the service.',
      severity: 'error',
      from: { path: '^packages/archive/' },
      to: { path: '^packages/', pathNot: ['^packages/archive/', '^packages/contracts/src/error-code\\.ts$'] },
    },
    {
      name: 'archiving-knows-no-read-model',
      comment: 'Archiving depends on the archive, the events and the store\'s port only: the audit thread composes it, and it reaches the audit index through the interface it declares (HotIndex).',
      severity: 'error',
      from: { path: '^packages/archiving/' },
      to: { path: '^packages/', pathNot: '^packages/(archiving|archive|contracts|events|event-store)/' },
    },
    {
      name: 'regions-included-by-compositions',
      comment: 'Multi-region is one module (packages/regions) that the compositions (services/) include or not: no other library imports it. A library that behaves by region declares what it takes (the issuer\'s IssuerRegion and PeerLink, a region name) and is given it.',
      severity: 'error',
      from: { path: '^packages/', pathNot: '^packages/regions/' },
      to: { path: '^packages/regions/' },
    },
    {
      name: 'no-circular',
      comment: 'No module reaches itself through its imports.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // Tests and test support may reach across rooms to set up what they check; the rules are about the product.
    exclude: { path: ['\\.test\\.ts$', '/testing/', '/dist/', 'node_modules'] },

    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports are dependencies too: a package that names another's types needs it installed.
    tsPreCompilationDeps: true,
    // Workspace packages resolve to their sources, as the tests and the type check read them.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['tessera-source', 'import', 'node', 'default'], extensions: ['.ts', '.js', '.d.ts'], mainFields: ['module', 'main', 'types'] },
    combinedDependencies: false,
  },
};
