// PLACEHOLDER of the r47-tokens branch, so that `phone-rep token create --spamblocker` compiles:
// the SpamBlocker Report API config and its route are another part of issue 47, whose file
// replaces this one at the merge (same path, same signature).
/** The Report API config, as SpamBlocker serialises it; `token` goes in its `Authorization: Bearer` header. */
export function spamBlockerReportApi(_base: string, _token?: string): Record<string, unknown> {
  // TODO(issue 47, the report config's part): replaced by the real builder at the merge.
  return {};
}
