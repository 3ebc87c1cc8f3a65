/** Reading unfinished runs' records in tests. */
import type { RunRecord } from "../../src/store/types.ts";

/** The text a run's record says is shown; undefined for a start not yet shown (or no record). */
export function shownText(record: RunRecord | undefined): string | undefined {
  return record?.kind === "relaying" ? record.shownText : undefined;
}
