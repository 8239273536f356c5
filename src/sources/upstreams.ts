// The three upstreams, in slot order: the list the composition root and the canary build from.
import { SOURCE_SLOTS, type SourceSlot } from '../domain/report.js';
import type { UpstreamDescription } from './common/wiring.js';
import { numeroinconnuUpstream } from './numeroinconnu/numeroinconnu-upstream.js';
import { telguarderUpstream } from './telguarder/telguarder-upstream.js';
import { tellowsUpstream } from './tellows/tellows-upstream.js';

export type UpstreamDescriptions = { [S in SourceSlot]: UpstreamDescription<S> };

export const UPSTREAMS_BY_SLOT: UpstreamDescriptions = {
  primary: tellowsUpstream,
  community: numeroinconnuUpstream,
  signals: telguarderUpstream,
};

/** The same, in slot order (SOURCE_SLOTS). */
export const UPSTREAMS: readonly UpstreamDescription[] = SOURCE_SLOTS.map((slot) => UPSTREAMS_BY_SLOT[slot]);
