// How the live canary builds the numeroinconnu source: the service's wiring, with the canary's
// recording fetcher.
import type { CanaryTarget } from '../markers.js';
import { createNumeroinconnuSource, describeNumeroinconnuMarkers, NUMEROINCONNU_UPSTREAM } from './numeroinconnu-source.js';

export const numeroinconnuCanaryTarget: CanaryTarget = {
  name: NUMEROINCONNU_UPSTREAM,
  createSource: (config, makeFetcher) =>
    createNumeroinconnuSource({
      baseUrl: config.NUMEROINCONNU_URL,
      fetcher: makeFetcher(NUMEROINCONNU_UPSTREAM, config.NUMEROINCONNU_RPM),
    }),
  describeMarkers: describeNumeroinconnuMarkers,
};
