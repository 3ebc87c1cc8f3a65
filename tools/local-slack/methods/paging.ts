// Slack's cursor pagination, for the methods that page (auth.teams.list, conversations.members,
// conversations.replies): an opaque `cursor` in, `response_metadata.next_cursor` out ("" at the end).
import { ApiFailure } from "../errors.ts";
import { str } from "../util.ts";

/** The page of `items` that `cursor` starts (the first without one), `limit` long, and the next cursor. */
export function cursorPage<T>(
  items: readonly T[],
  cursor: unknown,
  limit: number,
): { readonly page: T[]; readonly next: string } {
  const raw = str(cursor);
  const from = raw ? Number(Buffer.from(raw, "base64url").toString()) : 0;
  if (!Number.isInteger(from) || from < 0 || from > items.length) {
    throw new ApiFailure("invalid_cursor");
  }
  const end = from + limit;
  const next = end < items.length ? Buffer.from(String(end)).toString("base64url") : "";
  return { page: items.slice(from, end), next };
}
