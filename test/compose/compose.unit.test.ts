import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import draft07 from 'ajv/dist/refs/json-schema-draft-07.json' with { type: 'json' };
import { describe, expect, it } from 'vitest';

/**
 * No Docker engine runs where the tests run, so `docker compose config` cannot check the
 * topology. Instead: the files must satisfy the Compose Specification's JSON schema, and the
 * wiring between services (which no schema knows about) is asserted here.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

interface Healthcheck {
  test?: string | string[];
}
interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  healthcheck?: Healthcheck;
  depends_on?: string[] | Record<string, { condition: string }>;
  volumes?: (string | { source?: string; target?: string })[];
  ports?: (string | number | { target?: number | string })[];
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

// Compose resolves `<<:` merge keys (YAML 1.1); the yaml package does so only when asked.
const loadCompose = (path: string) => parse(read(path), { merge: true }) as ComposeFile;

const schema = JSON.parse(read('test/compose/compose-spec.schema.json')) as object;
// strict off: the published schema uses annotation keywords (deprecated) that ajv's strict
// mode reports as unknown.
const ajv = new Ajv({ allErrors: true, strict: false });
// The schema names draft-07 by its https address, which ajv does not know under that key;
// registering the bundled meta-schema there keeps the schema itself checked on compile.
ajv.addMetaSchema({ ...draft07, $id: 'https://json-schema.org/draft-07/schema' });
const validate = ajv.compile(schema);

const compose = loadCompose('docker-compose.yml');
const override = loadCompose('infra/nginx/compose.nginx.yml');
const tesseraServices = ['issuer', 'verifier', 'relay'] as const;

function env(service: Service): Record<string, string> {
  const raw = service.environment ?? {};
  if (Array.isArray(raw)) {
    return Object.fromEntries(raw.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
  }
  return Object.fromEntries(Object.entries(raw).map(([key, value]) => [key, String(value)]));
}

function healthcheckText(service: Service): string {
  const test = service.healthcheck?.test;
  return Array.isArray(test) ? test.join(' ') : (test ?? '');
}

describe('docker-compose.yml against the Compose Specification schema', () => {
  it('is valid', () => {
    const ok = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(ok).toBe(true);
  });

  it('stays valid with the NGINX override', () => {
    expect(validate(override), JSON.stringify(validate.errors, null, 2)).toBe(true);
  });

  it('the schema rejects what compose would reject, so a pass means something', () => {
    expect(validate({ services: { x: { image: 'a', helthcheck: {} } } })).toBe(false);
    expect(validate({ services: { x: { depends_on: { y: { condition: 'service_ready' } } } } })).toBe(false);
    expect(validate({ servics: {} })).toBe(false);
  });
});

describe('the wiring between services', () => {
  it('runs issuer, verifier and relay from one image built by infra/docker/Dockerfile', () => {
    for (const name of tesseraServices) {
      const service = compose.services[name];
      expect(service, name).toBeDefined();
      expect(service?.build, name).toEqual({ context: '.', dockerfile: 'infra/docker/Dockerfile' });
      const command = Array.isArray(service?.command) ? service.command : [service?.command];
      expect(command, name).toEqual([name]);
    }
    expect(new Set(tesseraServices.map((name) => compose.services[name]?.image)).size).toBe(1);
  });

  it('checks every Tessera service for readiness on /readyz over HTTPS', () => {
    for (const name of tesseraServices) {
      const text = healthcheckText(compose.services[name] ?? {});
      expect(text, name).toContain('/readyz');
      expect(text, name).toMatch(/https/);
      expect(text, name).toContain('process.env.TESSERA_PORT');
    }
  });

  it('gives EventStoreDB and Kafka healthchecks the Tessera services wait for', () => {
    expect(healthcheckText(compose.services.eventstore ?? {})).toContain('/health/live');
    expect(healthcheckText(compose.services.kafka ?? {})).toContain('kafka-broker-api-versions');
    for (const name of tesseraServices) {
      const dependsOn = compose.services[name]?.depends_on as Record<string, { condition: string }>;
      expect(dependsOn.eventstore?.condition, name).toBe('service_healthy');
      expect(dependsOn.kafka?.condition, name).toBe('service_healthy');
    }
    const relayDependsOn = compose.services.relay?.depends_on as Record<string, { condition: string }>;
    expect(relayDependsOn['kafka-topics']?.condition).toBe('service_completed_successfully');
  });

  it('points all three at the same event store and brokers, on the compose network names', () => {
    const envs = tesseraServices.map((name) => env(compose.services[name] ?? {}));
    for (const e of envs) {
      expect(e.TESSERA_EVENT_STORE).toBe('esdb://eventstore:2113?tls=false');
      expect(e.TESSERA_KAFKA_BROKERS).toBe('kafka:9092');
      expect(e.TESSERA_HOST).toBe('0.0.0.0');
      expect(Number(e.TESSERA_PORT)).toBeGreaterThan(0);
      expect(e.TESSERA_DATA_DIR).toBe('/data');
    }
    expect(compose.services.eventstore).toBeDefined();
    expect(env(compose.services.kafka ?? {}).KAFKA_ADVERTISED_LISTENERS).toContain('kafka:9092');
  });

  it('keeps each service’s data folder on its own named volume', () => {
    const sources = tesseraServices.map((name) => {
      const mount = compose.services[name]?.volumes?.find((v) => (typeof v === 'string' ? v.endsWith(':/data') : v.target === '/data'));
      expect(mount, name).toBeDefined();
      return typeof mount === 'string' ? mount.split(':')[0] : mount?.source;
    });
    expect(new Set(sources).size).toBe(3);
    for (const source of sources) expect(Object.keys(compose.volumes ?? {})).toContain(source);
  });

  it('creates the revocation topic the relay publishes to', () => {
    const command = compose.services['kafka-topics']?.command;
    expect(Array.isArray(command) ? command.join(' ') : command).toContain('--topic tessera.revocations');
    expect(env(compose.services.kafka ?? {}).KAFKA_PROCESS_ROLES).toBe('broker,controller');
    expect(compose.services.kafka?.image).toBe('apache/kafka:3.9.1');
  });
});

describe('infra/docker/Dockerfile', () => {
  const dockerfile = read('infra/docker/Dockerfile');
  const instructions = dockerfile
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const stages = instructions.filter((line) => /^FROM\s/i.test(line));

  const lastStage = instructions.slice(instructions.lastIndexOf(stages.at(-1) ?? ''));

  it('is multi-stage on a supported Node line (22 or 24), compiling with npm ci and the build', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/ARG NODE_IMAGE=node:(22|24)[-.\w]*/);
    expect(instructions.some((line) => /^RUN npm ci\b/.test(line))).toBe(true);
    expect(instructions.some((line) => /^RUN npm run build\b/.test(line))).toBe(true);
  });

  it('ships a runtime stage with no build toolchain, no npm install and no dev dependencies', () => {
    const runtime = lastStage.join('\n');
    expect(runtime).not.toMatch(/\b(g\+\+|make|python3|npm (ci|install))\b/);
    expect(runtime).toMatch(/COPY --from=build \/runtime \/app/);
    // The build stage prunes dev dependencies before the runtime tree is gathered.
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
  });

  it("ships the admin console's page and style and its compiled script, which the admin listener serves from the package", () => {
    expect(dockerfile).toMatch(/COPY --parents packages\/admin\/console\/tsconfig\.json packages\/admin\/console\/src packages\/admin\/console\/static \.\//);
    expect(dockerfile).toMatch(/cp -a packages\/admin\/console\/dist packages\/admin\/console\/static \/runtime\/packages\/admin\/console\//);
  });

  it('runs as a non-root user in the final stage', () => {
    const users = lastStage.filter((line) => /^USER\s/i.test(line));
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)?.split(/\s+/)[1];
    expect(user).toBeDefined();
    expect(['root', '0', '0:0']).not.toContain(user);
    // The user must come before the process starts.
    expect(lastStage.findIndex((line) => /^USER\s/i.test(line))).toBeLessThan(lastStage.findIndex((line) => /^ENTRYPOINT\s/i.test(line)));
  });

  it('runs node itself on the compiled CLI under tini as PID 1: no npm or npx at run time', () => {
    expect(dockerfile).toMatch(/ENTRYPOINT \["\/usr\/bin\/tini", "--", "node", "\/app\/services\/cli\/bin\/tessera\.js"\]/);
    expect(lastStage.join('\n')).toMatch(/apt-get install -y --no-install-recommends tini/);
  });
});

describe('infra/nginx forward-auth example', () => {
  const nginx = read('infra/nginx/nginx.conf');

  it('asks the verifier’s forward-auth endpoint for transaction:charge', () => {
    expect(nginx).toMatch(/auth_request \/_tessera_forward_auth;/);
    expect(nginx).toMatch(/set \$tessera_permission transaction:charge;/);
    expect(nginx).toMatch(/proxy_pass https:\/\/tessera_verifier\/forward-auth\?permission=\$tessera_permission;/);
    expect(nginx).toMatch(/server verifier:8443/);
  });

  it('passes the verified identity on as X-Tessera-* headers', () => {
    for (const header of ['X-Tessera-Subject', 'X-Tessera-Scope', 'X-Tessera-Client-Id']) {
      const variable = `$upstream_http_${header.toLowerCase().replaceAll('-', '_')}`;
      expect(nginx).toContain(variable);
      expect(nginx).toMatch(new RegExp(`proxy_set_header ${header} \\$tessera_`));
    }
  });

  it('is mounted by the override, in front of the verifier', () => {
    const service = override.services.nginx;
    expect(service?.volumes).toContain('./infra/nginx/nginx.conf:/etc/nginx/nginx.conf:ro');
    expect((service?.depends_on as Record<string, { condition: string }>).verifier?.condition).toBe('service_healthy');
  });
});
