import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cruiseHouse, currentDocument, renderMap, repositoryRoot, withMap } from './architecture-map.js';
import { regionSettingReads, regionSettingsRule } from './region-settings-rule.js';

/**
 * The layering rules hold on the code, docs/architecture.md's package map is the one the code
 * draws, and each rule fires on the import it forbids (checked on a small house built here).
 */
describe('the layering', () => {
  it('no import in packages/ or services/ breaks a rule, and the map in docs/architecture.md is the one the code draws', async () => {
    const result = await cruiseHouse();
    expect(result.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`)).toEqual([]);
    expect(result.summary.totalCruised).toBeGreaterThan(150);
    expect(withMap(currentDocument(), renderMap(result)) === currentDocument(), 'the package map is stale: run `npm run architecture`').toBe(true);
    expect(regionSettingReads(repositoryRoot)).toEqual([]);
  });

  describe('each rule fires on what it forbids', () => {
    const house = mkdtempSync(join(tmpdir(), 'tessera-layering-'));
    afterAll(() => rmSync(house, { recursive: true, force: true }));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(house, path)), { recursive: true });
      writeFileSync(join(house, path), text);
    };
    // A house with one of each broken import, resolved by relative paths so no workspace is needed.
    write('packages/lib/src/index.ts', "import { run } from '../../../services/issuer/src/main.js';\nexport const x = run;\n");
    write('services/issuer/src/main.ts', "import { other } from '../../relay/src/main.js';\nexport const run = other;\n");
    write('services/relay/src/main.ts', 'export const other = 1;\n');
    write('services/cli/src/main.ts', "import { run } from '../../issuer/src/main.js';\nexport const cli = run;\nexport const lazy = () => import('../../relay/src/main.js');\n");
    write('packages/domain/src/decide.ts', "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n");
    write('packages/tokens/src/index.ts', "import { host } from '../../host/src/index.js';\nexport const t = host;\n");
    write('packages/host/src/index.ts', "import { app } from '../../server/src/index.js';\nexport const host = app;\n");
    write('packages/server/src/index.ts', 'export const app = 1;\n');
    write('packages/relay/src/index.ts', "import { app } from '../../server/src/index.js';\nexport const relay = app;\n");
    write('packages/archive/src/index.ts', "import { store } from '../../event-store/src/index.js';\nexport const archive = store;\n");
    write('packages/event-store/src/index.ts', 'export const store = 1;\n');
    write('packages/archiving/src/index.ts', "import { index } from '../../audit/src/index.js';\nexport const archiving = index;\n");
    write('packages/audit/src/index.ts', 'export const index = 1;\n');
    write('packages/issuer/src/index.ts', "import { api } from '../../admin/src/index.js';\nexport const issuer = api;\n");
    write('packages/admin/src/index.ts', 'export const api = 1;\n');
    write('services/issuer/src/issuer-process.ts', 'export const issuerProcess = 1;\n');
    write('services/all-in-one/src/main.ts', "import { issuerProcess } from '../../issuer/src/issuer-process.js';\nexport const allInOne = issuerProcess;\n");
    write('packages/a/src/index.ts', "import { b } from '../../b/src/index.js';\nexport const a = b;\n");
    write('packages/b/src/index.ts', "import { a } from '../../a/src/index.js';\nexport const b = a;\n");
    // Region settings read outside the config and the region module, and where they may be named.
    write('packages/relay/src/flows.ts', "declare const config: Record<string, string | undefined>;\nexport const regional = config.TESSERA_REGION !== undefined;\n");
    write('services/cli/src/peer.ts', "declare const config: Record<string, string | undefined>;\nexport const secret = config['TESSERA_PEER_SECRET'];\n");
    write('services/issuer/src/fence.ts', "declare const config: Record<string, string | undefined>;\nexport const { TESSERA_CONTROL_REGION } = config;\n");
    write('packages/regions/src/region-settings.ts', "declare const config: Record<string, string | undefined>;\nexport const own = config.TESSERA_REGION;\n");
    write('packages/config/src/config.ts', "export const TESSERA_MIRRORED_REGIONS = 'TESSERA_MIRRORED_REGIONS';\n");
    write('packages/relay/src/flows.test.ts', "declare const config: Record<string, string | undefined>;\nexport const own = config.TESSERA_REGION;\n");
    write('packages/ssf/src/regional.ts', "import { own } from '../../regions/src/region-settings.js';\nexport const regional = own;\n");
    write('packages/ssf/src/mirrored.ts', "/** Named for the reader: TESSERA_REGION. */\nexport const help = 'needs TESSERA_REGION';\n");
    // The published set is the repository's (tokens is in it, host is not).
    write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }));

    it.each([
      ['library-imports-no-service', 'packages/lib/src/index.ts'],
      ['service-imports-no-other-service', 'services/issuer/src/main.ts'],
      ['role-libraries-compose-no-role', 'packages/issuer/src/index.ts'],
      ['cli-loads-mains-lazily', 'services/cli/src/main.ts'],
      ['domain-is-pure', 'packages/domain/src/decide.ts'],
      ['published-needs-only-published', 'packages/tokens/src/index.ts'],
      ['kernel-knows-no-http', 'packages/host/src/index.ts'],
      ['followers-need-no-http', 'packages/relay/src/index.ts'],
      ['archive-reads-alone', 'packages/archive/src/index.ts'],
      ['archiving-knows-no-read-model', 'packages/archiving/src/index.ts'],
      ['regions-included-by-compositions', 'packages/ssf/src/regional.ts'],
      ['no-circular', 'packages/a/src/index.ts'],
    ])('%s fires on %s', async (rule, from) => {
      const result = await cruiseHouse(['packages', 'services'], house);
      expect(result.summary.violations.filter((violation) => violation.rule.name === rule).map((violation) => violation.from)).toContain(from);
    });

    it(`${regionSettingsRule.name} fires on a region setting read outside the config and the region module, and on nothing else`, () => {
      expect(regionSettingReads(house)).toEqual([
        { file: 'packages/relay/src/flows.ts', line: 2, setting: 'TESSERA_REGION' },
        { file: 'services/cli/src/peer.ts', line: 2, setting: 'TESSERA_PEER_SECRET' },
        { file: 'services/issuer/src/fence.ts', line: 2, setting: 'TESSERA_CONTROL_REGION' },
      ]);
    });

    it('a service importing the shared issuer-process wiring breaks no rule', async () => {
      const result = await cruiseHouse(['packages', 'services'], house);
      expect(result.summary.violations.filter((violation) => violation.from === 'services/all-in-one/src/main.ts')).toEqual([]);
    });

    it('the CLI loading a main lazily, with import(), breaks no rule', async () => {
      const result = await cruiseHouse(['packages', 'services'], house);
      expect(result.summary.violations.filter((violation) => violation.from === 'services/cli/src/main.ts').map((violation) => violation.to)).toEqual(['services/issuer/src/main.ts']);
    });
  });
});
