// The published OpenAPI document read the way third-party tools read it: swagger-parser's
// validation, Redocly's recommended ruleset, openapi-typescript's generated types with a small
// client checked against them; and the contract helper every HTTP suite uses, shown to fail on
// the drifts it exists to catch.
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPhoneNumberParser,
  MAX_URI_LENGTH,
  WITHHELD_WORDS,
} from '../../src/domain/numbering/parse-phone-number.js';
import { healthyFakeSources } from '../../harness/lookup.js';
import { createOpenApiContract, type OpenApiContract, type OpenApiDocument } from '../support/contracts.js';
import { startTestServer, testNumberingPlan, type TestServer } from '../../harness/servers.js';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../..');
const bin = (name: string) => path.join(repoRoot, 'node_modules/.bin', name);
// The tools must not try to reach the network (telemetry, update notices).
const quietEnv = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

describe('the OpenAPI document as tools read it', () => {
  let server: TestServer;
  let documentText: string;
  let document: OpenApiDocument & Record<string, unknown>;
  let workDir: string;
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_MAX: '0' }, overrides: { sources: healthyFakeSources() } });
    const response = await fetch(`${server.baseUrl}/openapi.json`);
    documentText = await response.text();
    document = JSON.parse(documentText) as OpenApiDocument & Record<string, unknown>;
    workDir = await mkdtemp(path.join(tmpdir(), 'openapi-document-'));
  });
  afterAll(async () => {
    await server.close();
    await rm(workDir, { recursive: true, force: true });
  });

  it('validates with @apidevtools/swagger-parser', async () => {
    // swagger-parser dereferences in place, so it gets its own copy.
    const validated = await SwaggerParser.validate(
      JSON.parse(documentText) as Awaited<ReturnType<typeof SwaggerParser.validate>>,
    );
    expect(validated.info.version).toBe(
      document.info === undefined ? '' : (document.info as { version: string }).version,
    );
  });

  it("lints with zero errors under Redocly's recommended ruleset", async () => {
    const file = path.join(workDir, 'openapi.json');
    await writeFile(file, documentText);
    // Run from the temporary folder, so no configuration file of the repository applies.
    const { stdout } = await run(bin('redocly'), ['lint', '--extends=recommended', '--format=json', file], {
      cwd: workDir,
      env: quietEnv,
      timeout: 120_000,
    }).catch((error: { stdout?: string; stderr?: string }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }));
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; severity: string }[];
    };
    expect(report.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 150_000);

  it('says what the package is: version from package.json, an SPDX licence, a relative server', async () => {
    const info = document.info as { version: string; license: { identifier: string } };
    const packageJson = (await import('../../package.json', { with: { type: 'json' } })).default as { version: string };
    expect(info.version).toBe(packageJson.version);
    expect(info.license.identifier).toBe('MIT');
    expect(document.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  it('gives every operation an operationId, a summary and a description, and every error status a problem example', () => {
    const operations = Object.values(document.paths).flatMap((item) => Object.values(item)) as unknown as {
      operationId?: string;
      summary?: string;
      description?: string;
      responses: Record<string, { content?: Record<string, { example?: unknown }> }>;
    }[];
    // The phone routes (5), the service's (3) and the report routes (3).
    expect(operations).toHaveLength(11);
    expect(new Set(operations.map((operation) => operation.operationId)).size).toBe(11);
    for (const operation of operations) {
      expect(operation.summary, operation.operationId).toBeTruthy();
      expect(operation.description, operation.operationId).toBeTruthy();
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        expect(
          response.content?.['application/problem+json']?.example,
          `${operation.operationId} ${status}`,
        ).toBeDefined();
      }
    }
  });

  it('documents every header the text routes send, those of an answer decided without a lookup included', () => {
    const paths = document.paths as Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>;
    for (const route of ['/api/phone/{number}/verdict', '/api/phone/{number}/cid']) {
      const headers = Object.keys(paths[route]?.get?.responses['200']?.headers ?? {});
      expect(headers).toEqual(
        expect.arrayContaining(['X-Reputation-Score', 'X-Reputation-Risk', 'X-Operator-List', 'X-Caller-Reports']),
      );
    }
  });

  it('documents no body for a 304, and a 304 with If-None-Match: * is a documented answer', async () => {
    const notModified = Object.values(document.paths)
      .flatMap((item) => Object.values(item) as Array<{ responses: Record<string, { content?: unknown }> }>)
      .flatMap((operation) => (operation.responses['304'] === undefined ? [] : [operation.responses['304']]));
    expect(notModified.length).toBeGreaterThanOrEqual(3);
    for (const response of notModified) expect(response.content).toBeUndefined();
    // The fuzz suite's counterexample: a held answer asked for with `If-None-Match: *`.
    await server.app.inject({ url: '/api/phone/0612345678' });
    const answer = await server.app.inject({ url: '/api/phone/0612345678', headers: { 'if-none-match': '*' } });
    expect(answer.statusCode).toBe(304);
    expect(
      createOpenApiContract(document).describeMismatch({
        method: 'GET',
        path: '/api/phone/0612345678',
        status: 304,
        contentType: undefined,
        body: '',
        headers: answer.headers,
      }),
    ).toBeUndefined();
  });

  it('generates TypeScript types with openapi-typescript that a small client type-checks against', async () => {
    const documentFile = path.join(workDir, 'openapi.json');
    await writeFile(documentFile, documentText);
    await run(bin('openapi-typescript'), [documentFile, '-o', path.join(workDir, 'phone-reputation-api.d.ts')], {
      env: quietEnv,
      timeout: 120_000,
    });
    await copyFile(path.join(repoRoot, 'examples/client.ts'), path.join(workDir, 'client.ts'));
    await writeFile(path.join(workDir, 'package.json'), JSON.stringify({ type: 'module' }));
    await writeFile(
      path.join(workDir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          types: [],
          noUncheckedIndexedAccess: true,
        },
        files: ['client.ts'],
      }),
    );
    const result = await run(bin('tsc'), ['-p', path.join(workDir, 'tsconfig.json')], { timeout: 120_000 }).then(
      () => ({ code: 0, output: '' }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, output: error.stdout ?? '' }),
    );
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, 150_000);

  it('rejects a client that reads a member the document does not have', async () => {
    // The check above could pass by accident if the types were all `any`: a wrong member must fail.
    const broken = path.join(workDir, 'broken.ts');
    await writeFile(
      broken,
      "import type { paths } from './phone-reputation-api.js';\ntype S = paths['/api/phone/{number}/score']['get']['responses'][200]['content']['application/json'];\nexport const risk = (answer: S): string => answer.data.riskLevel;\n",
    );
    await writeFile(
      path.join(workDir, 'tsconfig.broken.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          types: [],
        },
        files: ['broken.ts'],
      }),
    );
    const failed = await run(bin('tsc'), ['-p', path.join(workDir, 'tsconfig.broken.json')], { timeout: 120_000 }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? 'failed',
    );
    expect(failed).toMatch(/riskLevel/);
  }, 150_000);

  describe('the contract helper', () => {
    let contract: OpenApiContract;
    beforeAll(() => {
      contract = createOpenApiContract(document);
    });
    const problem = (status: number, title: string, extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        type: `/problems/${title.toLowerCase().replaceAll(' ', '-')}`,
        title,
        status,
        requestId: 'r-1',
        success: false,
        error: title,
        ...extra,
      });
    const problemHeaders = { 'x-request-id': 'r-1', 'cache-control': 'no-store' };

    it('accepts a documented answer', () => {
      const body = problem(429, 'Too many requests');
      const answer = {
        method: 'GET',
        path: '/api/phone/0612345678',
        status: 429,
        contentType: 'application/problem+json; charset=utf-8',
        body,
      };
      expect(
        contract.describeMismatch({ ...answer, headers: { ...problemHeaders, 'retry-after': '12' } }),
      ).toBeUndefined();
    });

    it('fails an undocumented status', () => {
      expect(
        contract.describeMismatch({
          method: 'GET',
          path: '/api/phone/0612345678',
          status: 500,
          contentType: 'application/problem+json',
          body: problem(500, 'Internal server error'),
        }),
      ).toMatch(/500 is not documented/);
      expect(
        contract.describeMismatch({
          method: 'GET',
          path: '/api/phone/0612345678/info',
          status: 502,
          contentType: 'application/problem+json',
          body: problem(502, 'All data sources failed'),
        }),
      ).toMatch(/not documented/);
    });

    it('fails an undocumented content type', () => {
      expect(
        contract.describeMismatch({
          method: 'GET',
          path: '/api/phone/0612345678',
          status: 429,
          contentType: 'application/json',
          body: problem(429, 'Too many requests'),
        }),
      ).toMatch(/content type/);
    });

    it('fails a body that differs from its schema', () => {
      expect(
        contract.describeMismatch({
          method: 'GET',
          path: '/health',
          status: 200,
          contentType: 'application/json',
          body: JSON.stringify({ status: 'ok', uptime: 1 }),
        }),
      ).toMatch(/timestamp/);
      expect(
        contract.describeMismatch({
          method: 'GET',
          path: '/api/phone/06',
          status: 502,
          contentType: 'application/problem+json',
          body: problem(502, 'All data sources failed'),
        }),
      ).toMatch(/phoneInfo|number|sources/);
    });

    it('fails a missing required header, a header off its schema, and an undocumented header', () => {
      const base = {
        method: 'GET',
        path: '/api/phone/0612345678',
        status: 429,
        contentType: 'application/problem+json',
        body: problem(429, 'Too many requests'),
      };
      expect(contract.describeMismatch({ ...base, headers: problemHeaders })).toMatch(/retry-after is missing/);
      expect(contract.describeMismatch({ ...base, headers: { ...problemHeaders, 'retry-after': 'soon' } })).toMatch(
        /retry-after/,
      );
      const shed = { ...base, status: 503, body: problem(503, 'Service overloaded') };
      expect(
        contract.describeMismatch({ ...shed, headers: { ...problemHeaders, ratelimit: '"default";r=1;t=2' } }),
      ).toMatch(/undocumented header ratelimit/);
    });
  });
});

describe('the number parameter published in the document', () => {
  let server: TestServer;
  interface NumberParameter {
    path: string;
    schema: Record<string, unknown>;
    description: string;
    examples: Record<string, { value: string }>;
  }
  let numberSchemas: NumberParameter[];
  const parse = createPhoneNumberParser(testNumberingPlan(), 'FR');
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_MAX: '0' }, overrides: { sources: healthyFakeSources() } });
    const document = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { parameters?: Array<Omit<NumberParameter, 'path'> & { name: string; in: string }> }>
      >;
    };
    numberSchemas = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.values(operations).flatMap((operation) =>
        (operation.parameters ?? [])
          .filter((parameter) => parameter.in === 'path' && parameter.name === 'number')
          .map((parameter) => ({ ...parameter, path })),
      ),
    );
  });
  afterAll(async () => server.close());

  it('keeps no copy of the parser rules: a plain string with the outer length bound', () => {
    expect(numberSchemas.map(({ path }) => path)).toEqual(
      expect.arrayContaining(['/api/phone/{number}', '/api/phone/{number}/score', '/api/phone/{number}/info']),
    );
    for (const { schema } of numberSchemas) {
      expect(schema.type).toBe('string');
      expect(schema.maxLength).toBe(MAX_URI_LENGTH);
      expect(Object.keys(schema).filter((keyword) => !['type', 'minLength', 'maxLength'].includes(keyword))).toEqual(
        [],
      );
    }
  });

  it('lists in its description and examples spellings the parser accepts, phone-system forms included', () => {
    for (const parameter of numberSchemas) {
      const examples = Object.values(parameter.examples).map((example) => example.value);
      for (const example of examples) expect(parse(example), example).toMatchObject({ ok: true });
      expect(examples.some((example) => example.startsWith('tel:'))).toBe(true);
      expect(examples.some((example) => example.startsWith('sip:'))).toBe(true);
      for (const word of WITHHELD_WORDS) expect(parameter.description).toContain(word);
    }
  });

  it('leaves every refusal to the parser, which says why over HTTP', async () => {
    // Spellings the former pattern refused and the parser now reads, and the reverse cases.
    const cases: Array<[string, number, string | undefined]> = [
      [encodeURIComponent('tel:+33-6-12-34-56-78;npdi'), 200, undefined],
      ['33612345678', 200, undefined],
      ['06..12', 400, 'misplaced_separator'],
      [encodeURIComponent(`sip:+33612345678@${'h'.repeat(MAX_URI_LENGTH)}`), 400, 'too_long'],
    ];
    for (const [segment, status, code] of cases) {
      const response = await fetch(`${server.baseUrl}/api/phone/${segment}/info`);
      const body = (await response.json()) as { code?: string };
      expect(response.status, segment).toBe(status);
      expect(body.code, segment).toBe(code);
    }
  });
});
