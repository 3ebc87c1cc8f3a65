/**
 * Issue 24's long-run check: one native-streaming run of 12 minutes on the local Slack, whose
 * streams end five minutes after chat.startStream as Slack's do. The thread must end up
 * showing the service's whole answer, in order, with no text twice. `scale` shrinks both
 * durations alike (12: a 1-minute answer, 25 s streams) to check it quickly.
 */
import { comparable } from "./measure.ts";
import { runScenario, type ScenarioResult, type StreamingMode } from "./scenario.ts";

const ANSWER_MS = 12 * 60_000;
const STREAM_LIFETIME_MS = 5 * 60_000;
const CHUNK_MS = 200;
/**
 * 30 characters a second, 21,600 in all: a stream reaches Slack's five minutes (9,000
 * characters) before the app's 10,000 characters per message would end it, and the answer
 * stays under the app's 60,000 characters per thread, beyond which the rest is only in the
 * attached answer.md.
 */
const CHUNK_CHARS = 6;
/** Length of the substrings of the answer looked for in the thread (comparable characters). */
const PIECE = 32;

export interface TextCheck {
  /** Every character of the answer is shown. */
  readonly complete: boolean;
  /** The answer's pieces appear in its order. */
  readonly inOrder: boolean;
  /** No text is shown more often than the answer has it. */
  readonly noDuplicates: boolean;
  readonly detail: string;
}

/** How often each substring of `len` characters occurs in `text` (one entry per offset). */
function grams(text: string, len: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i + len <= text.length; i++) {
    const key = text.slice(i, i + len);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/**
 * Compares what a thread shows with the service's answer (whitespace, zero-width spaces and
 * the fences the app adds where it splits an answer are ignored), by substrings of 32
 * characters: a character of the answer is shown when one of the substrings around it is;
 * text is duplicated when a substring is shown more often than the answer has it; the order
 * is followed when the answer's consecutive 32-character pieces are found one after the other.
 * Linear in the lengths (times 32).
 */
export function checkText(shownText: string, answer: string): TextCheck {
  const shown = comparable(shownText);
  const want = comparable(answer);
  if (want.length < PIECE) {
    const ok = shown === want;
    return { complete: ok, inOrder: ok, noDuplicates: ok, detail: `shown "${shown}"` };
  }
  const inShown = grams(shown, PIECE);
  const inAnswer = grams(want, PIECE);
  // Coverage of the answer's characters by substrings also shown (a difference array).
  const cover = new Int32Array(want.length + 1);
  for (let i = 0; i + PIECE <= want.length; i++) {
    if (inShown.has(want.slice(i, i + PIECE))) {
      cover[i] = (cover[i] ?? 0) + 1;
      cover[i + PIECE] = (cover[i + PIECE] ?? 0) - 1;
    }
  }
  let depth = 0;
  let missing = 0;
  let firstMissing = -1;
  for (let i = 0; i < want.length; i++) {
    depth += cover[i] ?? 0;
    if (depth > 0) continue;
    missing++;
    if (firstMissing < 0) firstMissing = i;
  }
  const duplicated = [...inShown].filter(([g, n]) => n > (inAnswer.get(g) ?? n));
  let pos = 0;
  let outOfOrder: string | undefined;
  for (let i = 0; i + PIECE <= want.length; i += PIECE) {
    const piece = want.slice(i, i + PIECE);
    if (!inShown.has(piece)) continue; // missing, or across a place the order changed
    const at = shown.indexOf(piece, pos);
    if (at < 0) {
      outOfOrder = piece;
      break;
    }
    pos = at + PIECE;
  }
  const details = [`${shown.length} of ${want.length} characters shown (whitespace aside)`];
  if (missing > 0) {
    details.push(
      `${missing} characters missing, first at ${firstMissing}: "${want.slice(firstMissing, firstMissing + PIECE)}"`,
    );
  }
  if (outOfOrder !== undefined) details.push(`out of order from "${outOfOrder}"`);
  if (duplicated[0]) {
    details.push(`${duplicated.length} substrings shown twice, first "${duplicated[0][0]}"`);
  }
  return {
    complete: missing === 0,
    inOrder: outOfOrder === undefined,
    noDuplicates: duplicated.length === 0,
    detail: details.join("; "),
  };
}

export interface LongRunOptions {
  readonly scale: number;
  readonly mode: StreamingMode;
  readonly appDir?: string | undefined;
  readonly appEnv?: Readonly<Record<string, string>> | undefined;
  /** A person also presses stop on the first stream halfway through its lifetime. */
  readonly userStop?: boolean | undefined;
  readonly progress: (line: string) => void;
}

export interface LongRunResult {
  readonly options: LongRunOptions;
  readonly answerMs: number;
  readonly lifetimeMs: number;
  readonly chunks: number;
  readonly result: ScenarioResult;
  readonly check: TextCheck | undefined;
}

export async function runLongCheck(o: LongRunOptions): Promise<LongRunResult> {
  const answerMs = ANSWER_MS / o.scale;
  const lifetimeMs = STREAM_LIFETIME_MS / o.scale;
  const chunks = Math.round(answerMs / CHUNK_MS);
  o.progress(
    `long run: ${o.mode}, a ${Math.round(answerMs / 1000)} s answer, streams end ${Math.round(lifetimeMs / 1000)} s after chat.startStream`,
  );
  const result = await runScenario({
    runs: 1,
    scale: 1,
    answerLength: chunks * CHUNK_CHARS,
    chunkChars: CHUNK_CHARS,
    delayMs: [CHUNK_MS, CHUNK_MS],
    timeoutMs: answerMs + 120_000,
    sendConcurrency: 1,
    streaming: o.mode,
    appEnv: o.appEnv,
    streamLifetimeMs: lifetimeMs,
    userStopAfterMs: o.userStop ? lifetimeMs / 2 : undefined,
    keepText: true,
    progress: o.progress,
    appDir: o.appDir,
  });
  const answer = result.answers?.[0];
  return {
    options: o,
    answerMs,
    lifetimeMs,
    chunks,
    result,
    check: answer ? checkText(answer.shown, answer.content) : undefined,
  };
}

export function longRunText(l: LongRunResult): string {
  const r = l.result;
  const calls = (m: string) => r.callsPerRun[m] ?? 0;
  const ended = Object.entries(r.errors)
    .filter(([k]) => /message_not_in_streaming_state|stopped_by_user/.test(k))
    .map(([k, n]) => `${k} ×${n}`)
    .join(", ");
  const label = `long run (${l.options.mode}, scale ${l.options.scale}${l.options.userStop ? ", stopped by a person" : ""})`;
  const c = l.check;
  const line = (pass: boolean | undefined, what: string) =>
    `${pass === undefined ? "n/a " : pass ? "PASS" : "FAIL"}  ${label}: ${what}`;
  return [
    `Long run: one ${l.options.mode} run, a ${Math.round(l.answerMs / 1000)} s answer (${l.chunks} chunks of ${CHUNK_CHARS} characters, one every ${CHUNK_MS} ms), streams end ${Math.round(l.lifetimeMs / 1000)} s after chat.startStream (scale ${l.options.scale} of 12 min / 5 min)${l.options.userStop ? `; a person pressed stop on the first stream ${Math.round(l.lifetimeMs / 2000)} s after its start` : ""}.`,
    `  calls: startStream ${calls("chat.startStream")}, appendStream ${calls("chat.appendStream")}, stopStream ${calls("chat.stopStream")}, update ${calls("chat.update")}, postMessage ${calls("chat.postMessage")}; streams ended by Slack: ${ended === "" ? "none answered" : ended}`,
    `  bot messages in the thread: ${r.messagesPerAnswer}; lag p50 / p95 ${((r.lag.p50 ?? 0) / 1000).toFixed(2)} / ${((r.lag.p95 ?? 0) / 1000).toFixed(2)} s; 429s ${r.rateLimited.slack}; wall ${Math.round(r.wallMs / 1000)} s`,
    `  ${c ? c.detail : "the run did not end"}${r.problems.length > 0 ? `\n  problems: ${r.problems.join(" | ")}` : ""}`,
    line(c?.complete, "complete (every part of the answer shown)"),
    line(c?.inOrder, "in order"),
    line(c?.noDuplicates, "no duplicate text"),
    line(r.complete === 1, `final status Completed and text equal to the answer (${r.complete}/1)`),
  ].join("\n");
}
