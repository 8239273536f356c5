// What each phone system in docs/integrations/ does with a recipe, reproduced from the product's
// own source, so that a recipe is run here the way the product would run it. One section per
// product; each names the file (and function) it follows. None of these products is packaged for
// the test machine: where a behaviour is not reproduced, the helper throws rather than guess, so a
// recipe that relies on it fails its test.
//
// Strings handed to Asterisk and PHP are kept as "binary" strings (one JS character per byte,
// latin1 of the UTF-8 bytes): both count and cut bytes, not characters.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'htmlparser2';
import { Element } from 'domhandler';

const INTEGRATIONS = fileURLToPath(new URL('../../docs/integrations/', import.meta.url));

// ---------------------------------------------------------------------------------------------
// The recipes as written: fenced blocks of docs/integrations/<page>, found by their info string.

export interface RecipeBlock {
  /** The fence's info string, e.g. `ini extensions.conf`. */
  info: string;
  body: string;
}

export function recipeBlocks(page: string): RecipeBlock[] {
  const text = readFileSync(`${INTEGRATIONS}${page}`, 'utf8');
  const blocks: RecipeBlock[] = [];
  const fence = /^```([^\n]*)\n([\s\S]*?)^```$/gm;
  for (let match = fence.exec(text); match !== null; match = fence.exec(text))
    blocks.push({ info: (match[1] ?? '').trim(), body: match[2] ?? '' });
  return blocks;
}

/** The one block of `page` whose info string is `info`; throws if there is none or more than one. */
export function recipeBlock(page: string, info: string): string {
  const found = recipeBlocks(page).filter((block) => block.info === info);
  if (found.length !== 1 || found[0] === undefined)
    throw new Error(`${page}: expected one \`\`\`${info} block, found ${found.length}`);
  return found[0].body;
}

export function integrationPage(page: string): string {
  return readFileSync(`${INTEGRATIONS}${page}`, 'utf8');
}

// ---------------------------------------------------------------------------------------------
// libcurl as the products use it: a GET with a connect timeout and a total timeout; the path is
// sent as written (no re-encoding), the answer kept whatever its status.

export interface ProductAnswer {
  /** 0 when no answer came (refused, reset, timed out). */
  status: number;
  /** The body as bytes, one JS character per byte. */
  binaryBody: string;
  headers: http.IncomingHttpHeaders;
}

export interface ProductRequestLog {
  /** The URL as the product wrote it. */
  url: string;
  /** The longest this request could take, ms: its total timeout. */
  boundMs: number;
}

export async function productGet(
  url: string,
  options: { connectTimeoutMs: number; totalTimeoutMs: number; userAgent?: string },
): Promise<ProductAnswer> {
  const match = /^http:\/\/([^/:]+):(\d+)(\/.*)?$/.exec(url);
  if (match === null) throw new Error(`not an http://host:port/ URL: ${url}`);
  const [, host, port, path] = match;
  return new Promise<ProductAnswer>((resolve) => {
    const none: ProductAnswer = { status: 0, binaryBody: '', headers: {} };
    let settled = false;
    const finish = (answer: ProductAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connect);
      request.destroy();
      resolve(answer);
    };
    const request = http.get({
      host,
      port: Number(port),
      path: path ?? '/',
      headers: options.userAgent === undefined ? {} : { 'user-agent': options.userAgent },
      agent: false,
    });
    const total = setTimeout(() => finish(none), options.totalTimeoutMs);
    const connect = setTimeout(() => finish(none), Math.min(options.connectTimeoutMs, options.totalTimeoutMs));
    request.on('socket', (socket) => socket.once('connect', () => clearTimeout(connect)));
    request.on('error', () => finish(none));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        finish({
          status: response.statusCode ?? 0,
          binaryBody: Buffer.concat(chunks).toString('latin1'),
          headers: response.headers,
        }),
      );
      response.on('error', () => finish(none));
    });
  });
}

export const toBinary = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');
export const fromBinary = (binary: string): string => Buffer.from(binary, 'latin1').toString('utf8');

// ---------------------------------------------------------------------------------------------
// Asterisk: a dialplan interpreter for the applications and functions the recipes use.
// - CURL(): funcs/func_curl.c acf_curl_helper(): the body whatever the HTTP status, trailing
//   bytes below 33 removed (ast_str_trim_blanks), "" when nothing came; the handle's default
//   CURLOPT_TIMEOUT is 180 s (curl_instance_init), conntimeout/httptimeout are seconds, read with
//   atof (OT_INTEGER_MS) and set per channel by Set(CURLOPT(...)=...).
// - Variable substitution: main/pbx_variables.c pbx_substitute_variables_helper_full(): `${...}`
//   and `$[...]` found left to right by counting braces or brackets, their inside substituted
//   first, then the variable, function or expression evaluated; `${VAR:offset:length}` counts bytes.
// - FILTER (funcs/func_strings.c): keeps the bytes in the allowed set, `a-z` ranges included.
// - URIENCODE: main/utils.c ast_uri_encode() with ast_uri_http: all but A-Z a-z 0-9 - . _ ~ as %XX.
// - Expressions (main/ast_expr2.y): quoted strings and bare words, = != < > <= >= & |; a syntax
//   error gives "" (Asterisk logs it and the application gets an empty condition).
// - GotoIf/ExecIf (main/pbx_builtins.c, apps/app_exec.c): the condition is true unless "" or "0".

export interface AsteriskOutcome {
  /** The application that ended the run in this context: Dial, Hangup, or Goto to another context. */
  application: 'Dial' | 'Hangup' | 'Goto';
  data: string;
  /** CALLERID(name) at that point, decoded from UTF-8. */
  callerIdName: string;
  requests: ProductRequestLog[];
}

interface AsteriskStep {
  label?: string;
  application: string;
  data: string;
}

function stripAsteriskComment(line: string): string {
  let out = '';
  for (let index = 0; index < line.length; index += 1) {
    const character = line[index];
    if (character === '\\' && line[index + 1] === ';') {
      out += ';';
      index += 1;
    } else if (character === ';') break;
    else out += character;
  }
  return out.trim();
}

/** The contexts of an extensions.conf text: name → extension pattern → ordered steps. */
export function parseAsteriskConf(conf: string): Map<string, Map<string, AsteriskStep[]>> {
  const contexts = new Map<string, Map<string, AsteriskStep[]>>();
  let current: Map<string, AsteriskStep[]> | undefined;
  let lastExten: string | undefined;
  for (const raw of conf.split('\n')) {
    const line = stripAsteriskComment(raw);
    if (line === '') continue;
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) {
      current = new Map();
      contexts.set(header[1] ?? '', current);
      continue;
    }
    const step = /^(exten|same)\s*=>\s*(?:([^,]+),)?(\d+|n)(?:\(([^)]+)\))?,([A-Za-z]+)(?:\((.*)\))?$/.exec(line);
    if (!step || current === undefined) throw new Error(`not a dialplan line this interpreter reads: ${line}`);
    const [, kind, pattern, priority, label, application, data] = step;
    const exten = kind === 'exten' ? pattern : lastExten;
    if (exten === undefined) throw new Error(`"same" before any "exten": ${line}`);
    lastExten = exten;
    const steps = current.get(exten) ?? [];
    if (priority !== 'n' && Number(priority) !== steps.length + 1)
      throw new Error(`priority ${priority} out of order: ${line}`);
    steps.push({ label, application: application ?? '', data: data ?? '' });
    current.set(exten, steps);
  }
  return contexts;
}

function asteriskPatternMatches(pattern: string, exten: string): boolean {
  if (!pattern.startsWith('_')) return pattern === exten;
  let source = '';
  for (let index = 1; index < pattern.length; index += 1) {
    const character = pattern[index] ?? '';
    if (character === 'X') source += '[0-9]';
    else if (character === 'Z') source += '[1-9]';
    else if (character === 'N') source += '[2-9]';
    else if (character === '.') source += '.+';
    else if (character === '!') source += '.*';
    else if (character === '[') {
      const end = pattern.indexOf(']', index);
      source += `[${pattern.slice(index + 1, end).replace(/[\\^]/g, '\\$&')}]`;
      index = end;
    } else source += character.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`).test(exten);
}

function filterBytes(allowed: string, text: string): string {
  const keep = new Set<string>();
  for (let index = 0; index < allowed.length; index += 1) {
    const from = allowed.charCodeAt(index);
    if (allowed[index + 1] === '-' && index + 2 < allowed.length) {
      for (let code = from; code <= allowed.charCodeAt(index + 2); code += 1) keep.add(String.fromCharCode(code));
      index += 2;
    } else keep.add(String.fromCharCode(from));
  }
  return Array.from(text)
    .filter((character) => keep.has(character))
    .join('');
}

function uriEncodeBytes(binary: string): string {
  return Array.from(binary)
    .map((character) =>
      /[A-Za-z0-9\-._~]/.test(character)
        ? character
        : `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

/** ast_expr2 for the operators the recipes use; "" for what it would reject. */
export function evaluateAsteriskExpression(expression: string): string {
  const tokens = expression.match(/"[^"]*"|!=|<=|>=|[=<>&|]|[^\s"=<>&|!]+|\S/g) ?? [];
  if (tokens.some((token) => token.startsWith('"') && (token.length < 2 || !token.endsWith('"')))) return '';
  let position = 0;
  const value = (token: string): string => (token.startsWith('"') ? token.slice(1, -1) : token);
  const compare = (): string | undefined => {
    const left = tokens[position];
    if (left === undefined || /^(!=|<=|>=|[=<>&|])$/.test(left)) return undefined;
    position += 1;
    const operator = tokens[position];
    if (operator === undefined || !/^(!=|<=|>=|[=<>])$/.test(operator)) return value(left);
    position += 1;
    const rightToken = tokens[position];
    if (rightToken === undefined) return undefined;
    position += 1;
    const [a, b] = [value(left), value(rightToken)];
    const numeric = /^-?\d+$/.test(a) && /^-?\d+$/.test(b);
    const order = numeric ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0;
    const result = {
      '=': order === 0,
      '!=': order !== 0,
      '<': order < 0,
      '>': order > 0,
      '<=': order <= 0,
      '>=': order >= 0,
    }[operator as '=' | '!=' | '<' | '>' | '<=' | '>='];
    return result ? '1' : '0';
  };
  const truthy = (text: string): boolean => text !== '' && text !== '0';
  const and = (): string | undefined => {
    let left = compare();
    while (left !== undefined && tokens[position] === '&') {
      position += 1;
      const right = compare();
      if (right === undefined) return undefined;
      left = truthy(left) && truthy(right) ? left : '0';
    }
    return left;
  };
  let result = and();
  while (result !== undefined && tokens[position] === '|') {
    position += 1;
    const right = and();
    if (right === undefined) return '';
    result = truthy(result) ? result : truthy(right) ? right : '0';
  }
  return result === undefined || position !== tokens.length ? '' : result;
}

/** Runs `context` of an extensions.conf text for a call to `exten`, as Asterisk would. */
export async function runAsteriskContext(
  conf: string,
  context: string,
  exten: string,
  caller: { number: string; name: string },
): Promise<AsteriskOutcome> {
  const contexts = parseAsteriskConf(conf);
  const variables = new Map<string, string>();
  const curlOptions = new Map<string, number>();
  const requests: ProductRequestLog[] = [];
  let callerIdName = toBinary(caller.name);
  const callerIdNumber = toBinary(caller.number);

  const callFunction = async (name: string, argument: string): Promise<string> => {
    const comma = argument.indexOf(',');
    switch (name) {
      case 'CALLERID':
        if (argument === 'num') return callerIdNumber;
        if (argument === 'name') return callerIdName;
        throw new Error(`CALLERID(${argument}) is not reproduced`);
      case 'LEN':
        return String(argument.length);
      case 'URIENCODE':
        return uriEncodeBytes(argument);
      case 'FILTER':
        return filterBytes(argument.slice(0, comma), argument.slice(comma + 1));
      case 'CURL': {
        if (comma >= 0) throw new Error('CURL() with post data is not reproduced');
        const total = curlOptions.get('httptimeout');
        if (total === undefined)
          throw new Error(
            'CURL() without CURLOPT(httptimeout) may wait 180 s (func_curl.c curl_instance_init sets CURLOPT_TIMEOUT 180)',
          );
        const url = fromBinary(argument);
        requests.push({ url, boundMs: total });
        const answer = await productGet(url, {
          connectTimeoutMs: curlOptions.get('conntimeout') ?? total,
          totalTimeoutMs: total,
          userAgent: 'asterisk-libcurl-agent/1.0',
        });
        // eslint-disable-next-line no-control-regex -- ast_str_trim_blanks() removes every byte below 33
        return answer.binaryBody.replace(/[\x00-\x20]+$/, '');
      }
      default:
        throw new Error(`function ${name}() is not reproduced`);
    }
  };

  const evaluate = async (inside: string): Promise<string> => {
    const call = /^([A-Z_]+)\(([\s\S]*)\)$/.exec(inside);
    if (call) return callFunction(call[1] ?? '', call[2] ?? '');
    const substring = /^([A-Za-z_][\w]*):(-?\d+)(?::(\d+))?$/.exec(inside);
    if (substring) {
      const text = variables.get(substring[1] ?? '') ?? '';
      const offset = Number(substring[2]);
      const start = offset < 0 ? Math.max(0, text.length + offset) : offset;
      return substring[3] === undefined ? text.slice(start) : text.slice(start, start + Number(substring[3]));
    }
    return variables.get(inside) ?? '';
  };

  const substitute = async (text: string): Promise<string> => {
    let out = '';
    let index = 0;
    while (index < text.length) {
      const opener = text.slice(index, index + 2);
      if (opener === '${' || opener === '$[') {
        const [open, close] = opener === '${' ? ['{', '}'] : ['[', ']'];
        let depth = 1;
        let end = index + 2;
        for (; end < text.length && depth > 0; end += 1) {
          if (text[end] === open) depth += 1;
          else if (text[end] === close) depth -= 1;
        }
        if (depth !== 0) throw new Error(`unbalanced ${opener} in ${text}`);
        const inside = await substitute(text.slice(index + 2, end - 1));
        out += opener === '${' ? await evaluate(inside) : evaluateAsteriskExpression(inside);
        index = end;
      } else {
        out += text[index];
        index += 1;
      }
    }
    return out;
  };

  const truthy = (condition: string): boolean => condition.trim() !== '' && condition.trim() !== '0';

  const steps = [...(contexts.get(context)?.entries() ?? [])].find(([pattern]) =>
    asteriskPatternMatches(pattern, exten),
  )?.[1];
  if (steps === undefined) throw new Error(`no extension of [${context}] matches ${exten}`);
  let index = 0;
  let executed = 0;
  const jump = (target: string): boolean => {
    // A label of this extension, or context,exten,priority.
    const parts = target.split(',');
    if (parts.length === 1) {
      const at = steps.findIndex((step) => step.label === target);
      if (at < 0) throw new Error(`no label ${target}`);
      index = at;
      return true;
    }
    return false;
  };

  const runApplication = async (application: string, data: string): Promise<AsteriskOutcome | 'jumped' | undefined> => {
    switch (application) {
      case 'NoOp':
        return undefined;
      case 'Set': {
        const equals = data.indexOf('=');
        const name = data.slice(0, equals);
        const value = data.slice(equals + 1);
        const option = /^CURLOPT\((\w+)\)$/.exec(name);
        if (option) {
          if (!['conntimeout', 'httptimeout'].includes(option[1] ?? ''))
            throw new Error(`CURLOPT(${option[1]}) is not reproduced`);
          curlOptions.set(option[1] ?? '', Math.round(Number.parseFloat(value) * 1000));
        } else if (name === 'CALLERID(name)') callerIdName = value;
        else if (/^[A-Za-z_]\w*$/.test(name)) variables.set(name, value);
        else throw new Error(`Set(${name}) is not reproduced`);
        return undefined;
      }
      case 'ExecIf': {
        const question = data.indexOf('?');
        if (data.slice(question + 1).includes(':')) throw new Error('ExecIf with a false branch is not reproduced');
        if (!truthy(data.slice(0, question))) return undefined;
        const inner = /^([A-Za-z]+)\((.*)\)$/.exec(data.slice(question + 1));
        if (!inner) throw new Error(`ExecIf application not read: ${data}`);
        return runApplication(inner[1] ?? '', inner[2] ?? '');
      }
      case 'GotoIf': {
        const question = data.indexOf('?');
        const [whenTrue = '', whenFalse] = data.slice(question + 1).split(':');
        const target = truthy(data.slice(0, question)) ? whenTrue : whenFalse;
        if (target === undefined || target === '') return undefined;
        if (!jump(target)) throw new Error(`GotoIf to another context is not reproduced: ${target}`);
        return 'jumped';
      }
      case 'Goto': {
        if (jump(data)) return 'jumped';
        return { application: 'Goto', data, callerIdName: fromBinary(callerIdName), requests };
      }
      case 'Dial':
      case 'Hangup':
        return { application, data, callerIdName: fromBinary(callerIdName), requests };
      default:
        throw new Error(`application ${application}() is not reproduced`);
    }
  };

  while (index < steps.length) {
    executed += 1;
    if (executed > 200) throw new Error(`[${context}] loops`);
    const step = steps[index];
    if (step === undefined) break;
    index += 1;
    const data = await substitute(step.data);
    const outcome = await runApplication(step.application, data);
    if (outcome === 'jumped') continue;
    if (outcome !== undefined) return outcome;
  }
  throw new Error(`[${context}] ran off its end without a final application`);
}

// ---------------------------------------------------------------------------------------------
// FreeSWITCH: mod_dialplan_xml hunting one dialplan file, mod_curl's curl application, the regex
// API and mod_cidlookup's number and name handling.
// - src/mod/dialplans/mod_dialplan_xml/mod_dialplan_xml.c parse_exten(): conditions in order,
//   break on the first false one; a field is a caller-profile field or a `${...}` expansion; the
//   actions of a true condition are queued, except inline="true" ones, run at once during the hunt
//   (only applications flagged SAF_ROUTING_EXEC may be); `$1`... are the last match's groups; an
//   extension that matched ends the hunt unless continue="true".
// - PCRE: `$` also matches before a final line feed (PCRE2_DOLLAR_ENDONLY is not set).
// - src/mod/applications/mod_curl/mod_curl.c curl_app_function(): sets curl_response_code
//   ("0" when no answer) and curl_response_data (the body, whatever the status); the 1.10 branch
//   reads the channel variables curl_connect_timeout and curl_timeout (seconds); without them
//   libcurl waits 300 s to connect and without limit for the answer.
// - src/mod/applications/mod_commands/mod_commands.c regex_function(): arguments split on `|`.
// - src/mod/applications/mod_cidlookup/mod_cidlookup.c: string_digitsonly() then the url param
//   expanded with that number; do_lookup_url() keeps any body but "", " ", UNKNOWN, UNAVAILABLE
//   whatever the status; with no name do_lookup() gives "UNKNOWN".

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
}

/** Elements and attributes only: what dialplan and template files hold, read by htmlparser2 (the service's own parser) in XML mode. */
export function parseXml(text: string): XmlElement {
  const toElement = (node: Element): XmlElement => ({
    name: node.name,
    attributes: { ...node.attribs },
    children: node.children.filter((child): child is Element => child instanceof Element).map(toElement),
  });
  const document = parseDocument(text, { xmlMode: true, decodeEntities: true });
  return {
    name: '#document',
    attributes: {},
    children: document.children.filter((child): child is Element => child instanceof Element).map(toElement),
  };
}

export function findElements(element: XmlElement, name: string): XmlElement[] {
  return element.children.flatMap((child) => (child.name === name ? [child] : []).concat(findElements(child, name)));
}

/** PCRE as FreeSWITCH compiles a condition's expression, `$` matching before a final line feed. */
export function pcreMatch(expression: string, value: string): RegExpExecArray | null {
  const pattern = new RegExp(expression);
  return pattern.exec(value) ?? (value.endsWith('\n') ? pattern.exec(value.slice(0, -1)) : null);
}

/** The regex API: `regex <data>|<pattern>[|<substitution>]`, split on every `|`. */
export function freeswitchRegexApi(argument: string): string {
  const parts = argument.split('|');
  if (parts.length < 2) return '-ERR';
  let pattern: RegExp;
  try {
    pattern = new RegExp(parts[1] ?? '');
  } catch {
    return '';
  }
  const match = pattern.exec(parts[0] ?? '');
  if (parts.length === 2) return match ? 'true' : 'false';
  if (!match) return '';
  return (parts[2] ?? '').replace(/%(\d)/g, (_, group: string) => match[Number(group)] ?? '');
}

export interface FreeswitchCall {
  /** The hunt stopped in this file (an extension without continue matched). */
  stopped: boolean;
  /** Applications left to run after the hunt, in order, data expanded when run. */
  executed: { application: string; data: string }[];
  variables: Map<string, string>;
  requests: ProductRequestLog[];
}

const ROUTING_EXEC = new Set(['set', 'curl', 'cidlookup']);
// PHP trim()'s default set, which holds NUL and VT.
// eslint-disable-next-line no-control-regex -- the control characters are the set itself
const PHP_TRIM = /^[ \t\n\r\0\x0B]+|[ \t\n\r\0\x0B]+$/g;

export async function huntFreeswitchDialplan(
  xml: string,
  profile: { caller_id_number: string; caller_id_name: string; destination_number: string },
): Promise<FreeswitchCall> {
  const variables = new Map<string, string>();
  const requests: ProductRequestLog[] = [];
  const fields: Record<string, string> = { ...profile };
  let captures: RegExpExecArray | null = null;

  const expand = (text: string): string =>
    text.replace(/\$\{([^{}()]+)(?:\(([^{}]*)\))?\}/g, (_, name: string, argument: string | undefined) => {
      if (argument !== undefined) {
        if (name === 'regex') return freeswitchRegexApi(argument);
        throw new Error(`API ${name} is not reproduced`);
      }
      return variables.get(name) ?? fields[name] ?? '';
    });
  const withCaptures = (text: string): string =>
    text.replace(/\$(\d)/g, (_, group: string) => captures?.[Number(group)] ?? '');

  const execute = async (application: string, data: string): Promise<void> => {
    if (application === 'set') {
      const equals = data.indexOf('=');
      variables.set(data.slice(0, equals), data.slice(equals + 1));
    } else if (application === 'curl') {
      const url = data.split(' ')[0] ?? '';
      if (data.trim() !== url) throw new Error(`curl options are not reproduced: ${data}`);
      const total = variables.get('curl_timeout');
      if (total === undefined)
        throw new Error('curl without curl_timeout: libcurl waits without limit for the answer (mod_curl.c)');
      const connect = variables.get('curl_connect_timeout');
      const totalMs = Number(total) * 1000;
      requests.push({ url, boundMs: totalMs });
      const answer = await productGet(url, {
        connectTimeoutMs: connect === undefined ? 300_000 : Number(connect) * 1000,
        totalTimeoutMs: totalMs,
        userAgent: 'freeswitch-curl/1.0',
      });
      variables.set('curl_response_code', String(answer.status));
      variables.set('curl_response_data', fromBinary(answer.binaryBody));
    } else if (application !== 'respond') throw new Error(`application ${application} is not reproduced`);
  };

  const queued: { application: string; data: string }[] = [];
  let stopped = false;
  for (const extension of findElements(parseXml(xml), 'extension')) {
    let matched = true;
    for (const condition of extension.children.filter((child) => child.name === 'condition')) {
      if (condition.children.some((child) => child.name === 'anti-action'))
        throw new Error('anti-actions are not reproduced');
      const field = condition.attributes.field;
      const expression = condition.attributes.expression;
      if (field !== undefined && expression !== undefined) {
        const value = field.startsWith('${') ? expand(field) : (fields[field] ?? '');
        const match = pcreMatch(expression, value);
        if (!match) {
          matched = false;
          break;
        }
        captures = match;
      }
      for (const action of condition.children.filter((child) => child.name === 'action')) {
        const application = action.attributes.application ?? '';
        const data = withCaptures(action.attributes.data ?? '');
        if (action.attributes.inline === 'true') {
          if (!ROUTING_EXEC.has(application)) throw new Error(`${application} cannot run inline (no SAF_ROUTING_EXEC)`);
          await execute(application, expand(data));
        } else queued.push({ application, data });
      }
    }
    if (matched && extension.attributes.continue !== 'true') {
      stopped = true;
      break;
    }
  }
  const executed: { application: string; data: string }[] = [];
  for (const { application, data } of queued) {
    const expanded = expand(data);
    executed.push({ application, data: expanded });
    await execute(application, expanded);
  }
  return { stopped, executed, variables, requests };
}

/** mod_cidlookup.c string_digitsonly(). */
export const cidlookupDigitsOnly = (number: string): string => number.replace(/[^0-9]/g, '');

/** The request mod_cidlookup makes: its url param with ${caller_id_number} set to the digits only. */
export const cidlookupUrl = (urlParam: string, callerIdNumber: string): string =>
  urlParam.replaceAll('${caller_id_number}', cidlookupDigitsOnly(callerIdNumber));

/** The name mod_cidlookup gives for an answer (do_lookup_url then do_lookup), whatever its status. */
export function cidlookupName(answer: ProductAnswer): string {
  const body = fromBinary(answer.binaryBody);
  const usable = body !== '' && body !== ' ' && !/^(unknown|unavailable)$/i.test(body);
  return usable ? body : 'UNKNOWN';
}

// ---------------------------------------------------------------------------------------------
// CID Superfecta's "Regular Expressions 1" source (FreePBX/superfecta):
// - sources/source-Regular_Expressions_1.module get_caller_id(): `$thenumber` put in the URL by
//   str_replace, as it is; each expression line becomes '/' . str_replace('/', '\/', $rx) . '/' .
//   its options line; the first that matches gives $matches[1] to html2text().
// - includes/superfecta_base.php get_url_contents(): CURLOPT_FAILONERROR (a status of 400 or more
//   gives ""), CURLOPT_TIMEOUT and CONNECTTIMEOUT $curl_timeout (3.5 s), the body trimmed;
//   SearchURL(): preg_match; html2text(): tags stripped, entities decoded, white space folded,
//   wordwrap() at 75 bytes.
// - PHP's preg_match without the `u` option works on bytes: `.` is one byte.

export interface SuperfectaSource {
  url: string;
  regularExpressions: string;
  regularExpressionOptions: string;
}

/** The settings of a ```text superfecta block: `Name: value` lines. */
export function parseSuperfectaSettings(block: string): SuperfectaSource {
  const value = (name: string): string => {
    const line = block.split('\n').find((candidate) => candidate.startsWith(`${name}:`));
    if (line === undefined) throw new Error(`no "${name}:" line`);
    return line.slice(name.length + 1).trim();
  };
  return {
    url: value('URL'),
    regularExpressions: value('Regular Expressions'),
    regularExpressionOptions: value('Regular Expression Options'),
  };
}

/** preg_match($pattern, $subject) for a /…/flags pattern; null when it does not match. */
export function phpPregMatch(pattern: string, binarySubject: string): string[] | null {
  const end = pattern.lastIndexOf('/');
  if (!pattern.startsWith('/') || end <= 0) throw new Error(`not a /…/ pattern: ${pattern}`);
  const options = pattern.slice(end + 1);
  if (/[^imsu]/.test(options)) throw new Error(`option ${options} is not reproduced`);
  const unicode = options.includes('u');
  const flags = options.replace('u', '') + (unicode ? 'u' : '');
  const match = new RegExp(pattern.slice(1, end), flags).exec(unicode ? fromBinary(binarySubject) : binarySubject);
  if (match === null) return null;
  return unicode ? Array.from(match, (group) => toBinary(group ?? '')) : Array.from(match, (group) => group ?? '');
}

function phpWordwrap(binary: string, width = 75): string {
  const words = binary.split(' ');
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line === '') line = word;
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  lines.push(line);
  return lines.join('\n');
}

function superfectaHtml2text(binary: string): string {
  const text = binary
    .replace(/<[^>]*>/g, '')
    .replace(/\s+/g, ' ')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code) % 256))
    .replace(
      /&(amp|lt|gt|quot);/g,
      (_, entity: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"' })[entity as 'amp'] ?? '',
    );
  return phpWordwrap(text).replace(/^\n+|\n+$/g, '');
}

/** The caller name the source gives for `thenumber`, or null when none; `requests` records the URL. */
export async function runSuperfectaRegularExpressions(
  source: SuperfectaSource,
  thenumber: string,
  curlTimeoutMs = 3500,
): Promise<{ name: string | null; requests: ProductRequestLog[] }> {
  const url = source.url.replaceAll('$thenumber', thenumber);
  const requests = [{ url, boundMs: curlTimeoutMs }];
  const answer = await productGet(url, {
    connectTimeoutMs: curlTimeoutMs,
    totalTimeoutMs: curlTimeoutMs,
    userAgent: 'Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US; rv:1.8.1.1) Gecko/20061204 Firefox/2.0.0.1',
  });
  const content = answer.status >= 400 || answer.status === 0 ? '' : answer.binaryBody.replace(PHP_TRIM, '');
  const options = source.regularExpressionOptions.split('\n');
  const patterns = source.regularExpressions
    .split('\n')
    .map((expression, index) => `/${expression.replaceAll('/', '\\/')}/${options[index] ?? ''}`);
  for (const pattern of patterns) {
    const match = phpPregMatch(pattern, content);
    if (match) return { name: fromBinary(superfectaHtml2text(match[1] ?? '')), requests };
  }
  return { name: null, requests };
}

// ---------------------------------------------------------------------------------------------
// 3CX server-side CRM template (3CX's "CRM Template XML Description"; 3CX is closed source, so
// this follows its documentation only): [Number] formatted by <Number Prefix>, URL-encoded in the
// request when RequestEncoding="UrlEncoded"; parameters by their Default; a JSON answer; the
// Rule's path must hold a value; variables by dotted path; outputs with [Variable] filled in, and
// with AllowEmpty="false" no contact when an output is empty.

export async function runThreeCxTemplate(
  template: string,
  e164: string,
  baseUrl: string,
): Promise<{ outputs: Record<string, string> | null; requests: ProductRequestLog[] }> {
  const root = parseXml(template);
  const numberSpec = findElements(root, 'Number')[0];
  if (numberSpec?.attributes.Prefix !== 'Plus') throw new Error('only Prefix="Plus" is reproduced');
  const parameters: Record<string, string> = { BaseUrl: baseUrl };
  const request = findElements(root, 'Request')[0];
  if (request === undefined || request.attributes.RequestType !== 'Get' || request.attributes.ResponseType !== 'Json')
    throw new Error('only a GET with a JSON answer is reproduced');
  const encode =
    request.attributes.RequestEncoding === 'UrlEncoded' ? encodeURIComponent : (text: string): string => text;
  const fill = (text: string, values: Record<string, string>): string =>
    text.replace(/\[(\w+)\]/g, (whole, name: string) => values[name] ?? whole);
  const url = fill(request.attributes.Url ?? '', { ...parameters, Number: encode(e164) });
  const requests = [{ url, boundMs: 5000 }];
  const answer = await productGet(url, { connectTimeoutMs: 5000, totalTimeoutMs: 5000 });
  if (answer.status !== 200) return { outputs: null, requests };
  const json: unknown = JSON.parse(fromBinary(answer.binaryBody));
  const at = (path: string): string => {
    let value: unknown = json;
    for (const key of path.split('.'))
      value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
  };
  const rule = findElements(root, 'Rule')[0];
  if (rule === undefined || rule.attributes.Type !== 'Any') throw new Error('only a Rule of type Any is reproduced');
  const rulePath = template.match(/<Rule Type="Any">([^<]+)<\/Rule>/)?.[1] ?? '';
  if (at(rulePath) === '') return { outputs: null, requests };
  const variables: Record<string, string> = { ...parameters, Number: e164 };
  for (const variable of findElements(root, 'Variable'))
    variables[variable.attributes.Name ?? ''] = at(variable.attributes.Path ?? '');
  const outputs: Record<string, string> = {};
  for (const output of findElements(root, 'Output'))
    outputs[output.attributes.Type ?? ''] = fill(output.attributes.Value ?? '', variables);
  const allowEmpty = findElements(root, 'Outputs')[0]?.attributes.AllowEmpty !== 'false';
  if (!allowEmpty && Object.values(outputs).some((value) => value === '' || /\[\w+\]/.test(value)))
    return { outputs: null, requests };
  return { outputs, requests };
}

// ---------------------------------------------------------------------------------------------
// callblocker (pamapa/callblocker):
// - src/Settings.cpp Settings::load(): "online_credentials" read from the top level of
//   settings.json only, each entry a "name" plus its other fields, only string values kept (a
//   std::map, so in key order); getBase(): per phone "online_check" (and "enabled", "name",
//   "country_code" starting with +, "block_mode").
// - src/Block.cpp Block::checkOnline(): runs DATADIR/callblocker/onlinecheck_<online_check>.py
//   through the shell as `<script> --number <E.164> --<key>=<value>... 2>&1`, the credential
//   whose name is the check's name; the output parsed as JSON; isBlacklisted() requires the
//   boolean "spam", then reads "name" (string) and "score" (integer).

export interface CallblockerSettings {
  credentials: { name: string; data: Map<string, string> }[];
  phones: { name: string; onlineCheck: string }[];
}

export function readCallblockerSettings(json: string): CallblockerSettings {
  const root = JSON.parse(json) as Record<string, unknown>;
  const credentials: CallblockerSettings['credentials'] = [];
  const list = root.online_credentials;
  if (Array.isArray(list)) {
    for (const entry of list as Record<string, unknown>[]) {
      if (typeof entry.name !== 'string') continue;
      const data = new Map<string, string>();
      for (const key of Object.keys(entry).sort()) {
        const value = entry[key];
        if (key !== 'name' && typeof value === 'string') data.set(key, value);
      }
      credentials.push({ name: entry.name, data });
    }
  }
  const phones: CallblockerSettings['phones'] = [];
  for (const phone of (Array.isArray(root.phones) ? root.phones : []) as Record<string, unknown>[]) {
    if (phone.enabled !== true || typeof phone.name !== 'string') continue;
    if (typeof phone.country_code !== 'string' || !phone.country_code.startsWith('+')) continue;
    if (
      !['logging_only', 'allowlists_only', 'allowlists_and_blocklists', 'blocklists_only'].includes(
        String(phone.block_mode),
      )
    )
      continue;
    phones.push({ name: phone.name, onlineCheck: typeof phone.online_check === 'string' ? phone.online_check : '' });
  }
  return { credentials, phones };
}

/** The command line Block::checkOnline() runs, with `scriptDirectory` standing for DATADIR/callblocker. */
export function callblockerCommand(
  settings: CallblockerSettings,
  onlineCheck: string,
  e164: string,
  scriptDirectory: string,
): string {
  let parameters = `--number ${e164}`;
  const credential = settings.credentials.find((candidate) => candidate.name === onlineCheck);
  for (const [key, value] of credential?.data ?? []) parameters += ` --${key}=${value}`;
  return `${scriptDirectory}/onlinecheck_${onlineCheck}.py ${parameters} 2>&1`;
}

export interface CallblockerResult {
  /** What the script printed (stdout and stderr, as callblocker reads it). */
  output: string;
  exitCode: number;
  /** Block.cpp's reading of it: null when "spam" is missing or not a boolean. */
  read: { spam: boolean; name: string; score: number | null } | null;
}

export async function runCallblockerCheck(command: string): Promise<CallblockerResult> {
  const { output, exitCode } = await new Promise<{ output: string; exitCode: number }>((resolve) => {
    execFile('/bin/sh', ['-c', command], { timeout: 30_000 }, (error, stdout) => {
      resolve({ output: stdout, exitCode: error === null ? 0 : typeof error.code === 'number' ? error.code : 1 });
    });
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(output);
  } catch {
    return { output, exitCode, read: null };
  }
  const result = parsed as Record<string, unknown>;
  if (typeof result.spam !== 'boolean') return { output, exitCode, read: null };
  return {
    output,
    exitCode,
    read: {
      spam: result.spam,
      name: typeof result.name === 'string' ? result.name : '',
      score: Number.isInteger(result.score) ? (result.score as number) : null,
    },
  };
}
