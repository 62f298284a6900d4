import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * A rule dependency-cruiser cannot state, as it is about names, not imports: multi-region is one
 * module, so only the config (which parses the settings) and the region module (whose
 * `regionSettings` hands them on as a value) name a region setting. Anything else that reads one
 * from the config would make a region behaviour that the compositions cannot leave out.
 */
export const regionSettingsRule = {
  name: 'region-settings-in-one-module',
  comment:
    'Only the config (`packages/config`) and the region module (`packages/regions`) read a region setting (TESSERA_REGION, TESSERA_BARE_FAMILY_REGION, TESSERA_PEER_*, TESSERA_CONTROL_REGION, TESSERA_MIRRORED_REGIONS); the rest of the product is given `RegionSettings`, or the parts built from it, as a value.',
} as const;

/** The setting names the rule guards. */
const regionSetting = /^(TESSERA_REGION|TESSERA_BARE_FAMILY_REGION|TESSERA_PEER_[A-Z0-9_]+|TESSERA_CONTROL_REGION|TESSERA_MIRRORED_REGIONS)$/;

/** Where a region setting may be read. */
const allowed = /^packages\/(config|regions)\//;

/** Tests and test support set up what they check (as in the layering rules); the rule is about the product. */
const notProduct = /(\.test\.ts$|\/testing\/|\/dist\/|\.d\.ts$)/;

export interface RegionSettingRead {
  /** Relative to the house, with `/`. */
  readonly file: string;
  readonly line: number;
  readonly setting: string;
}

function productSources(baseDir: string): string[] {
  return ['packages', 'services'].flatMap((room) => {
    const roomDir = join(baseDir, room);
    if (!existsSync(roomDir)) return [];
    return readdirSync(roomDir).flatMap((workspace) => {
      const src = join(roomDir, workspace, 'src');
      if (!existsSync(src)) return [];
      return (readdirSync(src, { recursive: true, encoding: 'utf8' }) as string[])
        .filter((name) => name.endsWith('.ts'))
        .map((name) => relative(baseDir, join(src, name)).split('\\').join('/'))
        .filter((file) => !notProduct.test(file));
    });
  });
}

/**
 * Each place in product code outside the config and the region module that names a region setting
 * as code: a property or variable (`config.TESSERA_REGION`, `{ TESSERA_PEER_SECRET }`) or an
 * element access by its name (`config['TESSERA_REGION']`). Comments and messages that name a
 * setting for a reader are not reads, and are left alone.
 */
export function regionSettingReads(baseDir: string): RegionSettingRead[] {
  const reads: RegionSettingRead[] = [];
  for (const file of productSources(baseDir)) {
    if (allowed.test(file)) continue;
    const source = ts.createSourceFile(file, readFileSync(join(baseDir, file), 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      const named =
        ts.isIdentifier(node) ? node.text : ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression) ? node.argumentExpression.text : undefined;
      if (named !== undefined && regionSetting.test(named)) {
        reads.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, setting: named });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return reads.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}
