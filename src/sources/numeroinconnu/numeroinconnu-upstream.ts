// numeroinconnu.fr as the service and the canary see it: one host, a small budget, and at most
// two requests in flight (the site bans clients that open many connections).
import type { UpstreamDescription } from '../common/wiring.js';
import { fetcherFor, isFrenchNationalNumber } from '../common/wiring.js';
import { createNumeroinconnuSource, NUMEROINCONNU_UPSTREAM } from './numeroinconnu-source.js';
import { markersOfNumeroinconnu } from './parse-numeroinconnu-page.js';

export const numeroinconnuUpstream: UpstreamDescription<'community'> = {
  name: NUMEROINCONNU_UPSTREAM,
  slot: 'community',
  hosts: [{ fetcherName: NUMEROINCONNU_UPSTREAM, baseUrlKey: 'NUMEROINCONNU_URL', budgetKey: 'NUMEROINCONNU_RPM' }],
  maxConcurrency: 2,
  // A French site: French-plan numbers only.
  covers: isFrenchNationalNumber,
  createSource: (config, fetchers) =>
    createNumeroinconnuSource({
      baseUrl: config.NUMEROINCONNU_URL,
      fetcher: fetcherFor(fetchers, NUMEROINCONNU_UPSTREAM),
    }),
  markers: markersOfNumeroinconnu,
};
