// The paths the app answers, with their methods, collected from Fastify's `onRoute` hook as
// routes are registered. It builds the 405 answers (Allow lists the methods really answered)
// and lets the edge find the route of a request Fastify's router never saw (a request line
// Node refused, a URL the router could not decode).
import { routeFeatures, type RouteFeatures } from './route-config.js';

interface PathEntry {
  pattern: string;
  matcher: RegExp;
  methods: Set<string>;
  features: RouteFeatures;
}

function matcherOf(pattern: string): RegExp {
  const source = pattern
    .split('/')
    .map((segment) => {
      if (segment === '*') return '.*';
      if (segment.startsWith(':')) return '[^/]+';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  // Trailing slashes are ignored by the router (ignoreTrailingSlash).
  return new RegExp(`^${source}/?$`);
}

export class RouteTable {
  private readonly paths = new Map<string, PathEntry>();

  add(pattern: string, methods: readonly string[], config: unknown): void {
    let entry = this.paths.get(pattern);
    if (!entry) {
      entry = { pattern, matcher: matcherOf(pattern), methods: new Set(), features: routeFeatures(config) };
      this.paths.set(pattern, entry);
    }
    for (const method of methods) entry.methods.add(method);
  }

  /** Every registered path pattern with what it answers. */
  entries(): readonly PathEntry[] {
    return [...this.paths.values()];
  }

  /** The Allow header of a pattern: its methods, HEAD wherever GET is, and OPTIONS. */
  allowOf(pattern: string): string {
    const entry = this.paths.get(pattern);
    return entry ? allowList(entry.methods) : '';
  }

  /** The pattern a concrete path (query string already removed) belongs to, if any. */
  match(path: string): PathEntry | undefined {
    let wildcard: PathEntry | undefined;
    for (const entry of this.paths.values()) {
      if (!entry.matcher.test(path)) continue;
      // A static or parametric pattern wins over a wildcard, as in the router.
      if (!entry.pattern.includes('*')) return entry;
      wildcard ??= entry;
    }
    return wildcard;
  }
}

export function allowList(methods: ReadonlySet<string>): string {
  const allowed = new Set(methods);
  if (allowed.has('GET')) allowed.add('HEAD');
  allowed.add('OPTIONS');
  const order = ['GET', 'HEAD', 'OPTIONS'];
  return [
    ...order.filter((method) => allowed.has(method)),
    ...[...allowed].filter((method) => !order.includes(method)).sort(),
  ].join(', ');
}
