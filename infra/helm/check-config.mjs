// Reads each Tessera container's environment out of rendered manifests and parses it with the
// product's own configuration loader (@tessera/config, the compiled one the image runs), so a
// value the chart renders that Tessera would refuse at start (exit 2) fails here instead.
//
//   node infra/helm/check-config.mjs RENDERED.yaml...
//
// Variables that come from Secrets get stand-ins of the right shape, made here and never printed.
// loadConfig ignores a TESSERA_* variable it does not know, so a misspelt name in a template
// would pass it and do nothing in the pod: every TESSERA_* variable rendered must also be one
// of its schema's.
// Prints one line per container and "config: N valid, N invalid"; exits 1 when one is invalid.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { ConfigSchema, loadConfig } from '@tessera/config';

// The bootstrap admin token's two variables are read by the issuer's start (the admin API's
// bootstrap), which is being added beside this chart and is not in ConfigSchema yet. Exactly
// these two are let through; once ConfigSchema has them this list no longer matters, as every
// name in it is then known anyway.
const readOutsideConfigSchema = new Set(['TESSERA_ADMIN_BOOTSTRAP_TOKEN_FILE', 'TESSERA_ADMIN_BOOTSTRAP_SCOPES']);
const known = (name) => Object.hasOwn(ConfigSchema.shape, name) || readOutsideConfigSchema.has(name);

// The image's own ENV (infra/docker/Dockerfile), under what the pod sets.
const imageEnvironment = { NODE_ENV: 'production', TESSERA_HOST: '0.0.0.0', TESSERA_PORT: '8443', TESSERA_DATA_DIR: '/data' };
const fromSecrets = {
  TESSERA_EVENT_STORE: 'esdb://eventstore.invalid:2113',
  TESSERA_PEER_SECRET: randomBytes(32).toString('base64url'),
};

let valid = 0;
let invalid = 0;
for (const file of process.argv.slice(2)) {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => doc.toJS())
    .filter(Boolean);
  const configMaps = new Map(docs.filter((doc) => doc.kind === 'ConfigMap').map((doc) => [doc.metadata.name, doc.data ?? {}]));
  for (const workload of docs.filter((doc) => doc.kind === 'StatefulSet' || doc.kind === 'Deployment')) {
    for (const container of workload.spec.template.spec.containers) {
      const environment = { ...imageEnvironment };
      for (const source of container.envFrom ?? []) {
        const data = configMaps.get(source.configMapRef?.name);
        if (data === undefined) throw new Error(`${file}: ${workload.metadata.name} names ConfigMap ${source.configMapRef?.name}, which is not rendered`);
        Object.assign(environment, data);
      }
      for (const variable of container.env ?? []) {
        // The pod's name (the downward API) is the first pod's; $(NAME) names a variable set above it, as Kubernetes expands it.
        const podName = `${workload.metadata.name}-0`;
        const value = variable.valueFrom?.secretKeyRef ? (fromSecrets[variable.name] ?? 'from-a-secret') : variable.valueFrom?.fieldRef?.fieldPath === 'metadata.name' ? podName : variable.value;
        environment[variable.name] = typeof value === 'string' ? value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (reference, name) => environment[name] ?? reference) : value;
      }
      const label = `${file.split('/').pop()}: ${workload.kind}/${workload.metadata.name} (${container.args?.join(' ')})`;
      const unknown = Object.keys(environment).filter((name) => name.startsWith('TESSERA_') && !known(name));
      try {
        if (unknown.length > 0) throw new Error(`not a Tessera setting (misspelt?): ${unknown.join(', ')}`);
        loadConfig(environment);
        valid += 1;
        console.log(`ok   ${label}`);
      } catch (error) {
        invalid += 1;
        console.log(`FAIL ${label}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}
console.log(`config: ${valid} valid, ${invalid} invalid`);
process.exitCode = invalid > 0 || valid === 0 ? 1 : 0;
