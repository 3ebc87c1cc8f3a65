import { GrowingText, owned } from "../util/text.ts";

/**
 * A run's text followed over several connections, each character once, whether the server replays
 * from the start or continues: numbered chunks (`chunk_id`, `sequence`) by number, others by
 * comparing with the text shown. A connection showing a gap (a continuing server does not resend
 * what it produced while nobody was connected) is held back until a polled `snapshot()` places it.
 */
export class TextReconciler {
  /** The text yielded so far. */
  #y: GrowingText;
  #base = "";
  /** The current connection's text, kept only while it is compared or placed; its length, always. */
  #c = new GrowingText();
  #connLength = 0;
  #mode: "fresh" | "unknown" | "replay" | "continue" | "aligning" | "aligned" = "fresh";
  #maxSeq = Number.NEGATIVE_INFINITY;
  /** Where the current connection's text starts in the yielded text ("aligned" mode). */
  #offset = 0;
  /** Text a snapshot added that numbered chunks of the next connection may repeat. */
  #overlap = "";
  /** Once checked, each delta compares only its own characters: a replay costs its length. */
  #replay: "unchecked" | "agrees" | "differs" = "unchecked";

  /** Hold back a gap-revealing connection's text until it is long enough to locate safely. */
  static readonly ALIGN_MIN_CHARS = 48;

  get text(): string {
    return this.#y.text;
  }

  /** Characters of the current connection held (the caller bounds them). */
  get connectionChars(): number {
    return this.#c.length;
  }

  /** Whether a snapshot of the service's text is needed to place the current connection. */
  get needsSnapshot(): boolean {
    return this.#mode === "aligning" && this.#c.length >= TextReconciler.ALIGN_MIN_CHARS;
  }

  #connections: number;

  /** `shown`: text a previous follower already showed (resuming another instance's run). */
  constructor(shown = "") {
    this.#y = new GrowingText(shown);
    this.#connections = shown === "" ? 0 : 1;
  }

  newConnection(): void {
    // A connection placed by a snapshot stops short of its end: a continuing server's next
    // numbered chunks repeat that text first.
    if (this.#mode === "aligned") {
      this.#overlap = this.#y.text.slice(this.#offset + this.#connLength);
    }
    this.#base = this.#y.text;
    this.#c = new GrowingText("");
    this.#connLength = 0;
    this.#replay = "unchecked";
    this.#mode = this.#connections++ === 0 ? "fresh" : "unknown";
  }

  /** Returns the part of `text` that is new, or "" when it was seen already (or is held). */
  delta(text: string, seq?: number): string {
    if (seq !== undefined) {
      if (seq <= this.#maxSeq) return "";
      const gap = this.#mode === "unknown" && seq > this.#maxSeq + 1;
      this.#maxSeq = seq;
      if (gap) {
        this.#overlap = "";
        this.#mode = "aligning";
      }
      if (this.#mode === "aligning" || this.#mode === "aligned") return this.#onConn(text);
      let fresh = text;
      if (this.#overlap !== "") {
        if (this.#overlap.startsWith(fresh)) {
          this.#overlap = this.#overlap.slice(fresh.length);
          return "";
        }
        if (!fresh.startsWith(this.#overlap)) {
          // It repeats only part of what the snapshot added: placed by the next snapshot, like a gap.
          this.#overlap = "";
          this.#mode = "aligning";
          return this.#onConn(text);
        }
        fresh = fresh.slice(this.#overlap.length);
        this.#overlap = "";
      }
      if (this.#mode === "unknown") this.#mode = "continue";
      this.#y.append(fresh);
      return fresh;
    }
    if (this.#mode === "unknown") {
      const conn = this.#c.text + text; // compared only: kept by #onConn while it must be
      if (this.#base !== "") {
        // The base starts with the connection's text so far: compare the delta only.
        if (this.#base.startsWith(text, this.#connLength)) {
          this.#c.append(text); // still replaying, or undecidable yet
          this.#connLength += text.length;
          return "";
        }
        if (conn.startsWith(this.#base)) this.#mode = "replay";
      }
      // Nothing to compare with, or text that is not a replay: place it with a snapshot.
      if (this.#mode === "unknown") this.#mode = "aligning";
    }
    return this.#onConn(text);
  }

  #onConn(text: string): string {
    const before = this.#connLength;
    this.#connLength += text.length;
    const compared =
      this.#mode === "aligning" || (this.#mode === "replay" && this.#replay === "unchecked");
    if (compared) this.#c.append(text);
    switch (this.#mode) {
      case "fresh":
      case "continue":
      case "unknown":
        this.#y.append(text);
        return text;
      case "replay":
        return this.#replayed(text, before);
      case "aligning":
        return "";
      case "aligned": {
        // The delta stands at `at` in the service's text: only what passes the yielded is new.
        const at = this.#offset + before;
        if (at + text.length <= this.#y.text.length) return "";
        const out = text.slice(Math.max(0, this.#y.text.length - at));
        this.#y.append(out);
        return out;
      }
    }
  }

  /** What a replaying connection's delta (at `before`) adds to the yielded text. */
  #replayed(text: string, before: number): string {
    const yielded = this.#y.text;
    if (this.#replay === "unchecked") {
      const conn = this.#c.text;
      const shared = Math.min(conn.length, yielded.length);
      this.#replay = yielded.startsWith(conn.slice(0, shared)) ? "agrees" : "differs";
      this.#c = new GrowingText(""); // checked: from now on each delta compares its own text
      if (this.#replay === "differs" || conn.length <= yielded.length) return "";
      const out = conn.slice(yielded.length);
      this.#y.append(out);
      return out;
    }
    if (this.#replay === "differs") return "";
    // The part of the delta the yielded text already has must be the same (both only grow:
    // once they differ, they never agree again).
    const known = Math.max(0, Math.min(text.length, yielded.length - before));
    if (known > 0 && !yielded.startsWith(text.slice(0, known), before)) {
      this.#replay = "differs";
      return "";
    }
    const out = text.slice(known);
    this.#y.append(out);
    return out;
  }

  /** The service's whole text so far (a `complete` event, a poll): its new tail. */
  snapshot(full: string): string {
    if (this.#mode === "aligning") return this.#align(full);
    const y = this.#y.text;
    const added = full.length > y.length && full.startsWith(y) ? this.#grownTo(full) : "";
    this.#overlap += added;
    return added;
  }

  #align(full: string): string {
    const conn = this.#c.text;
    this.#c = new GrowingText(""); // placed: its text is the yielded text's from now on
    const at = full.startsWith(this.#y.text) ? lastIndexOf(full, conn) : -1;
    if (at < 0) {
      // The snapshot does not contain the connection's text: keep it rather than lose it.
      this.#mode = "continue";
      this.#y.append(conn);
      return conn;
    }
    this.#mode = "aligned";
    this.#offset = at;
    return this.#grownTo(full);
  }

  #grownTo(full: string): string {
    // A piece of its own: a slice would keep the whole snapshot alive in whatever holds it.
    const out = owned(full.slice(this.#y.text.length));
    this.#y = new GrowingText(full);
    return out;
  }
}

/**
 * `hay.lastIndexOf(needle)` in linear time (Knuth–Morris–Pratt from the end): V8's takes the
 * product of the lengths, which a hostile stream's long text against a long snapshot reaches.
 */
export function lastIndexOf(hay: string, needle: string): number {
  const m = needle.length;
  if (m === 0) return hay.length;
  // fail[k]: the longest proper border of the needle's last k + 1 characters.
  const fail = new Int32Array(m);
  for (let k = 1, b = 0; k < m; k++) {
    const c = needle.charCodeAt(m - 1 - k);
    while (b > 0 && c !== needle.charCodeAt(m - 1 - b)) b = fail[b - 1] ?? 0;
    if (c === needle.charCodeAt(m - 1 - b)) b++;
    fail[k] = b;
  }
  for (let i = hay.length - 1, matched = 0; i >= 0; i--) {
    const c = hay.charCodeAt(i);
    while (matched > 0 && c !== needle.charCodeAt(m - 1 - matched))
      matched = fail[matched - 1] ?? 0;
    if (c === needle.charCodeAt(m - 1 - matched)) matched++;
    if (matched === m) return i;
  }
  return -1;
}
