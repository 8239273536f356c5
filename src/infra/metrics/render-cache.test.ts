import { Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { METRICS_RENDER_INTERVAL_MS, renderAtMostEvery } from './render-cache.js';

/** A registry whose one gauge counts the renders (collect() runs once per render). */
function countingRegistry(): { registry: Registry; renders: () => number; failNext: () => void } {
  const registry = new Registry();
  let renders = 0;
  let fail = false;
  registry.registerMetric(
    new Gauge({
      name: 'renders',
      help: 'Renders so far.',
      registers: [],
      collect() {
        renders += 1;
        if (fail) {
          fail = false;
          throw new Error('collect failed');
        }
        this.set(renders);
      },
    }),
  );
  return { registry, renders: () => renders, failNext: () => (fail = true) };
}

describe('the /metrics render cache', () => {
  it('renders once per interval: later scrapes within it, and concurrent ones, get the same bytes', async () => {
    const { registry, renders } = countingRegistry();
    let now = 10_000;
    const render = renderAtMostEvery(registry, { now: () => now });
    const [a, b] = await Promise.all([render(), render()]);
    now += METRICS_RENDER_INTERVAL_MS - 1;
    const c = await render();
    expect(renders()).toBe(1);
    expect(a).toBe(b);
    expect(c).toBe(a);
    expect(a.toString('utf8')).toContain('renders 1');
    now += 1;
    const d = await render();
    expect(renders()).toBe(2);
    expect(d.toString('utf8')).toContain('renders 2');
  });

  it('renders again after a failed render, and when the clock goes back', async () => {
    const { registry, renders, failNext } = countingRegistry();
    let now = 10_000;
    const render = renderAtMostEvery(registry, { now: () => now });
    failNext();
    await expect(render()).rejects.toThrow('collect failed');
    expect((await render()).toString('utf8')).toContain('renders 2');
    now -= 5_000;
    await render();
    expect(renders()).toBe(3);
  });

  it('with an interval of 0, renders on every scrape', async () => {
    const { registry, renders } = countingRegistry();
    const render = renderAtMostEvery(registry, { intervalMs: 0, now: () => 1 });
    await render();
    await render();
    expect(renders()).toBe(2);
  });
});
