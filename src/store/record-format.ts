/**
 * The format of what the store writes: every record (a thread's, a run's index entry, recent
 * tasks, defaults, and the records beside them) is stored as `{ v, value }`, `v` being the
 * version of the format its value is written in. This release writes and reads version 1 only;
 * the first release that changes a record's shape writes 2 and migrates what it finds at 1.
 * (Sealed secrets inside a record have their own envelope: util/secret-box.ts.)
 */
import { z } from "zod";

/** The version of the format this release writes, and the only one it reads. */
export const FORMAT_VERSION = 1;

/** A record as stored. */
export interface StampedRecord {
  readonly v: number;
  readonly value: unknown;
}

/**
 * What a record of another format reads as (a later release's, or not a stamped record at
 * all). No reader's check takes it, so each treats it as it treats a damaged record: a
 * thread or a run that is not found, a setting that is unreadable.
 */
export const OTHER_FORMAT: unique symbol = Symbol("a record of another format");

const Stamped = z.object({ v: z.literal(FORMAT_VERSION), value: z.unknown() });

/** `value` as this release stores it. */
export const stamp = (value: unknown): StampedRecord => ({ v: FORMAT_VERSION, value });

/** The value of a stored record of this release's format, or OTHER_FORMAT. */
export function unstamp(stored: unknown): unknown {
  const read = Stamped.safeParse(stored);
  return read.success ? read.data.value : OTHER_FORMAT;
}
