/**
 * Text of a run followed over several connections: each character once, whether the server
 * replays from the start or continues, with gaps filled from polled snapshots.
 */

/**
 * Reconciles the text of successive connections with what was already yielded, so that a
 * server that replays from the start and one that continues both give each character once.
 * Numbered chunks (`chunk_id`, `sequence`) are deduplicated by number; otherwise a new
 * connection is compared with the text already shown until it is clear which it does.
 *
 * A server that continues does not resend what it produced while nobody was connected.
 * When a reconnection shows such a gap, the new connection's text is held back until a
 * polled snapshot (`snapshot()`) is available; the held text is then located in the
 * snapshot and the connection is followed from that position, so the gap is filled and
 * nothing is repeated.
 */
export class TextReconciler {
  #yielded = "";
  #base = "";
  #conn = "";
  #mode: "fresh" | "unknown" | "replay" | "continue" | "aligning" | "aligned" = "fresh";
  #maxSeq = Number.NEGATIVE_INFINITY;
  /** Where the current connection's text starts in the yielded text ("aligned" mode). */
  #offset = 0;
  /** Text a snapshot added that numbered chunks of the next connection may repeat. */
  #overlap = "";

  /** Hold back a gap-revealing connection's text until it is long enough to locate safely. */
  static readonly ALIGN_MIN_CHARS = 48;

  get text(): string {
    return this.#yielded;
  }

  /** True when a snapshot of the service's text is needed to place the current connection. */
  get needsSnapshot(): boolean {
    return this.#mode === "aligning" && this.#conn.length >= TextReconciler.ALIGN_MIN_CHARS;
  }

  #connections = 0;

  /** `shown`: text a previous follower already showed (resuming another instance's run). */
  constructor(shown = "") {
    this.#yielded = shown;
    if (shown !== "") this.#connections = 1;
  }

  newConnection(): void {
    // A connection placed by a snapshot stops short of the snapshot's end: a continuing
    // server's next numbered chunks repeat that text first.
    if (this.#mode === "aligned") {
      this.#overlap = this.#yielded.slice(this.#offset + this.#conn.length);
    }
    this.#base = this.#yielded;
    this.#conn = "";
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
          // The chunk repeats only part of what the snapshot added (the snapshot was taken
          // in the middle of it, or of an earlier one): guessing where it starts could repeat
          // or drop text, so it is placed with the next snapshot, like a gap.
          this.#overlap = "";
          this.#mode = "aligning";
          return this.#onConn(text);
        }
        fresh = fresh.slice(this.#overlap.length);
        this.#overlap = "";
      }
      if (this.#mode === "unknown") this.#mode = "continue";
      this.#yielded += fresh;
      return fresh;
    }
    if (this.#mode === "unknown") {
      const conn = this.#conn + text;
      if (this.#base !== "") {
        if (this.#base.startsWith(conn)) {
          this.#conn = conn; // still replaying, or undecidable yet
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
    this.#conn += text;
    switch (this.#mode) {
      case "fresh":
      case "continue":
      case "unknown":
        this.#yielded += text;
        return text;
      case "replay":
        return this.#advanceTo(this.#conn);
      case "aligning":
        return "";
      case "aligned": {
        const end = this.#offset + this.#conn.length;
        if (end <= this.#yielded.length) return "";
        const out = this.#conn.slice(this.#yielded.length - this.#offset);
        this.#yielded += out;
        return out;
      }
    }
  }

  /**
   * The service's whole text so far (a `complete` event, a polled result): only its new
   * tail counts. While a connection waits to be placed, this places it.
   */
  snapshot(full: string): string {
    if (this.#mode === "aligning") return this.#align(full);
    const added = this.#advanceTo(full);
    this.#overlap += added;
    return added;
  }

  #align(full: string): string {
    const at = full.startsWith(this.#yielded) ? full.lastIndexOf(this.#conn) : -1;
    if (at < 0) {
      // The snapshot does not contain the connection's text (it differs from the stream):
      // keep the connection's text rather than lose it.
      this.#mode = "continue";
      this.#yielded += this.#conn;
      return this.#conn;
    }
    this.#mode = "aligned";
    this.#offset = at;
    const out = full.slice(this.#yielded.length);
    this.#yielded = full;
    return out;
  }

  #advanceTo(full: string): string {
    if (full.length <= this.#yielded.length || !full.startsWith(this.#yielded)) return "";
    const out = full.slice(this.#yielded.length);
    this.#yielded = full;
    return out;
  }
}
