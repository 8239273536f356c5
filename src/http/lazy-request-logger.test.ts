import { describe, expect, it } from 'vitest';
import { capturingLogger } from '../../test/support/loggers.js';
import { LazyRequestLogger, lazyChildLoggerFactory } from './lazy-request-logger.js';

describe('LazyRequestLogger', () => {
  it('makes no child until something logs, then logs through one with the bindings', () => {
    const { logger, lines, children } = capturingLogger();
    const lazy = new LazyRequestLogger(logger, { reqId: 'abc' }, undefined);
    expect(lazy.level).toBe('info');
    expect(lazy.made).toBe(false);
    expect(children()).toBe(0);
    lazy.warn({ code: 'x' }, 'something %s', 'odd');
    lazy.debug('below the level');
    expect(lazy.made).toBe(true);
    expect(children()).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, pid: 7, reqId: 'abc', code: 'x', msg: 'something odd' });
    lazy.error(new Error('boom'));
    expect(children()).toBe(1);
    expect(lines[1]).toMatchObject({ level: 50, reqId: 'abc', err: { message: 'boom' } });
  });

  it('passes a route log level on to the child, and takes a level set on it', () => {
    const { logger, lines } = capturingLogger();
    const lazy = new LazyRequestLogger(logger, { reqId: 'r1' }, { level: 'warn' });
    expect(lazy.level).toBe('warn');
    lazy.info('not written');
    lazy.warn('written');
    lazy.level = 'error';
    lazy.warn('not written either');
    expect(lines.map((line) => line.msg)).toEqual(['written']);
    expect(lazy.child({ part: 'x' }).level).toBe('error');
  });

  it('is what the factory gives, with Fastify’s empty options dropped', () => {
    const { logger } = capturingLogger();
    const made = lazyChildLoggerFactory(logger, { reqId: 'q' }, {});
    expect(made).toBeInstanceOf(LazyRequestLogger);
    expect(made.level).toBe('info');
    expect(lazyChildLoggerFactory(logger, { reqId: 'q' }, { level: 'debug' }).level).toBe('debug');
  });
});
