/**
 * What a run may hold of the task service's data in memory, and every run together (`process`):
 * past either, the run asking is stopped or refused, and says so.
 */
import { DEFAULT_MEMORY_MB, type ServiceConfig } from "../config/config.ts";
import type { TextBudget } from "../service/follow.ts";
import { ByteBudget } from "../util/byte-budget.ts";

const MiB = 1024 * 1024;

/** The limits from the operator's settings (MiB). */
export function memoryLimits(mb: ServiceConfig["memoryMb"] = DEFAULT_MEMORY_MB) {
  return {
    /** The most of one answer kept in memory, in UTF-8 bytes. */
    answerBytes: mb.answer * MiB,
    /** The most of one run's files held at once, as the service sends them (base64 or text). */
    runFileBytes: mb.runFiles * MiB,
    /** All this process holds of the service's data at once: every run's answer and files. */
    process: new ByteBudget(mb.process * MiB),
    /** How long a file waits for room in the process's budget before it is listed instead. */
    fileWaitMs: 60_000,
  };
}

export type MemoryLimits = Readonly<ReturnType<typeof memoryLimits>>;

/**
 * What a byte of an answer's text takes in memory, at most: two copies of it are kept (the
 * follower's, to place what the service sends again; the run's, to attach it whole), and V8
 * stores a text with one character past Latin-1 at two bytes a character, ASCII ones included.
 */
const ANSWER_MEMORY_FACTOR = 4;

/** One run's answer as the process budget sees it: taken as it grows, given back by `release`. */
export class AnswerMemory implements TextBudget {
  readonly maxBytes: number;
  readonly #process: ByteBudget;
  #held = 0;
  /** Whether the process's budget, not the run's own, refused the last growth. */
  processFull = false;

  constructor(limits: MemoryLimits) {
    this.maxBytes = limits.answerBytes;
    this.#process = limits.process;
  }

  grow(bytes: number): boolean {
    if (this.#held + bytes > this.maxBytes) return false;
    if (!this.#process.tryTake(bytes * ANSWER_MEMORY_FACTOR)) {
      this.processFull = true;
      return false;
    }
    this.#held += bytes;
    return true;
  }

  release(): void {
    this.#process.give(this.#held * ANSWER_MEMORY_FACTOR);
    this.#held = 0;
  }
}
