// The blocklist feed's routes (routes/feed-routes.ts): left out of the OpenAPI document (the
// CardDAV subset and the files are described in docs/integrations/blocklist-feed.md), but
// typed by the same schemas as every other route group.
import { Type } from '@sinclair/typebox';

/** Not API operations: hidden from the OpenAPI document. */
export const HIDDEN = { hide: true } as const;

/** A card's route parameter: its file name in the address book. */
export const CardParamsSchema = Type.Object({ name: Type.String() });
