// The check every answer passes before the CLI shows any of it: the status must be one the
// route publishes, and the body must match that status's published schema (the server's own
// TypeBox schemas, through src/api-contract.ts). With --url the other end could be anything: a
// field of the wrong type, an array where a string belongs, an unknown member, is an error
// line naming the field, never output.
import { Kind, TypeRegistry, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { FULL_REPORT_ANSWERS } from '../api-contract.js';
import { sanitizeForTerminal } from './sanitize.js';

export type CheckedAnswer = { ok: true; value: unknown } | { ok: false; problem: string };

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null';

/**
 * `Type.Unsafe` carries a plain JSON Schema that TypeBox's checker does not read. The server's
 * are closed string vocabularies (`{ type: 'string', enum: [...] }`): this reads `type`, `enum`
 * and `const`, and refuses a value under any schema it cannot judge, so that a new kind of
 * Unsafe schema fails closed rather than letting anything through.
 */
function checkUnsafe(schema: Record<string, unknown>, value: unknown): boolean {
  const judged = new Set(['type', 'enum', 'const', 'description', 'examples', 'title', 'default']);
  if (Object.keys(schema).some((key) => !judged.has(key))) return false;
  const type = schema.type as JsonType | undefined;
  if (type !== undefined) {
    const typeOk =
      type === 'integer'
        ? Number.isInteger(value)
        : type === 'null'
          ? value === null
          : type === 'number'
            ? typeof value === 'number' && Number.isFinite(value)
            : typeof value === type;
    if (!typeOk) return false;
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return false;
  if ('const' in schema && schema.const !== value) return false;
  return true;
}

if (!TypeRegistry.Has('Unsafe'))
  TypeRegistry.Set('Unsafe', (schema, value) => checkUnsafe(schema as Record<string, unknown>, value));

type Answers = Record<string, { content?: Record<string, { schema: TSchema }> } | undefined>;

const compiled = new Map<string, Array<TypeCheck<TSchema>>>();

/** The compiled checks of one status (one per media type), or undefined when the route publishes no body for it. */
function checksFor(answers: Answers, status: number): Array<TypeCheck<TSchema>> | undefined {
  const key = String(status);
  const cached = compiled.get(key);
  if (cached !== undefined) return cached;
  const content = answers[key]?.content;
  if (content === undefined) return undefined;
  const checks = Object.values(content)
    .filter((media) => media.schema[Kind] !== undefined)
    .map((media) => TypeCompiler.Compile(media.schema));
  compiled.set(key, checks);
  return checks;
}

/** The body as JSON, checked against the full-report route's published schema for `status`. */
export function checkReportAnswer(status: number, body: string): CheckedAnswer {
  const checks = checksFor(FULL_REPORT_ANSWERS as unknown as Answers, status);
  if (checks === undefined || checks.length === 0)
    return { ok: false, problem: `the server answered HTTP ${status}, which the API does not publish for a report` };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { ok: false, problem: `the server's HTTP ${status} answer is not JSON` };
  }
  if (checks.some((check) => check.Check(value))) return { ok: true, value };
  // The first error of the first schema: its message is the schema's words, never the server's.
  const first = checks[0]?.Errors(value).First();
  // The path holds the server's member names: cleaned and cut like any text from it.
  const where =
    first === undefined
      ? ''
      : ` (${sanitizeForTerminal(first.path === '' ? '/' : first.path).slice(0, 120)}: ${first.message})`;
  return {
    ok: false,
    problem: `the server's HTTP ${status} answer does not match the schema the API publishes${where}`,
  };
}
