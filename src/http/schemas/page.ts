// The lookup page's routes (plugins/web-page.ts): left out of the OpenAPI document, typed like
// every other route group.
import { Type } from '@sinclair/typebox';

/**
 * `?lang=` picks the page's language before the cookie and Accept-Language. Any value is
 * accepted (an unknown one is ignored, as is a repeated one, which arrives as an array).
 */
export const PageQuerySchema = Type.Object({ lang: Type.Optional(Type.Unknown()) });
