// SlotResult builders for pure tests of the report builder and the score rule.
import type { LookupResult, SlotResult } from '../../src/domain/lookup/types.js';
import type { SourceDataBySlot, SourceSlot } from '../../src/domain/report.js';
import type { BlockedReason, ErrorReason } from '../../src/domain/ports/source.js';

export const FETCHED_AT = '2026-03-01T12:00:00.000Z';

export function okSlot<S extends SourceSlot>(data: SourceDataBySlot[S], cache: SlotResult['cache'] = 'miss'): SlotResult<S> {
  return { status: 'ok', fetchedAt: FETCHED_AT, cache, data };
}

export function notFoundSlot<S extends SourceSlot>(): SlotResult<S> {
  return { status: 'not_found', fetchedAt: FETCHED_AT, cache: 'miss', data: null };
}

export function errorSlot<S extends SourceSlot>(reason: ErrorReason): SlotResult<S> {
  return { status: 'error', reason, fetchedAt: FETCHED_AT, cache: 'miss', data: null };
}

export function blockedSlot<S extends SourceSlot>(reason: BlockedReason): SlotResult<S> {
  return { status: 'blocked', reason, fetchedAt: FETCHED_AT, cache: 'miss', data: null };
}

export function lookupResult(
  primary: SlotResult<'primary'>,
  community: SlotResult<'community'>,
  signals: SlotResult<'signals'>,
): LookupResult {
  return { primary, community, signals };
}
