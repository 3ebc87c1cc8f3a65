/**
 * Every record the store writes is `{ v, value }`, `v` the version of its format. This release
 * writes and reads 1 only; the first that changes a record's shape writes 2 and migrates 1.
 */
import { z } from "zod";

/** The version of the format this release writes, and the only one it reads. */
export const FORMAT_VERSION = 1;

export type StampedRecord = { readonly v: number; readonly value: unknown };

/** What a record of another format reads as: no reader's check takes it, like a damaged record. */
export const OTHER_FORMAT: unique symbol = Symbol("a record of another format");

const Stamped = z.object({ v: z.literal(FORMAT_VERSION), value: z.unknown() });

export const stamp = (value: unknown): StampedRecord => ({ v: FORMAT_VERSION, value });

/** undefined when `raw` is not JSON. */
export function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** The value of a stored record of this release's format, or OTHER_FORMAT. */
export function unstamp(stored: unknown): unknown {
  const read = Stamped.safeParse(stored);
  return read.success ? read.data.value : OTHER_FORMAT;
}
