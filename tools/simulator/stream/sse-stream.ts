/** One open `realtime=true` connection of a run: events, keep-alives, drops and its end. */
import type { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { data, junk, KEEP_ALIVE, oddlySpelled } from "./sse.ts";
import { type SimulatorEvents } from "../types.ts";

/** What a stream needs of the run it shows (a Run, structurally). */
export interface StreamOwner {
  readonly id: string;
  readonly malformed: boolean;
  readonly streams: Set<SseStream>;
}

export class SseStream {
  closed = false;
  #res: ServerResponse;
  #run: StreamOwner;
  #sent = 0;
  #dropAfter: number | undefined;
  #odd = 0;
  #junk = 0;
  #keepAlive: NodeJS.Timeout | undefined;
  #events: EventEmitter<SimulatorEvents>;

  constructor(
    res: ServerResponse,
    run: StreamOwner,
    dropAfter: number | undefined,
    events: EventEmitter<SimulatorEvents>,
  ) {
    this.#res = res;
    this.#run = run;
    this.#dropAfter = dropAfter;
    this.#events = events;
    res.on("close", () => {
      if (!this.closed) this.#close("client");
    });
    res.on("error", () => {}); // a write racing the client's hang-up; "close" follows
  }

  startKeepAlive(ms: number): void {
    if (ms > 0) this.#keepAlive = setInterval(() => this.write(KEEP_ALIVE), ms);
  }

  write(text: string): void {
    if (!this.closed && text !== "") this.#res.write(text);
  }

  /** Writes a content event; `split` writes it in two pieces cut inside a UTF-8 sequence. */
  content(json: string, split: boolean): void {
    if (this.closed) return;
    const malformed = this.#run.malformed;
    const line = malformed ? oddlySpelled(json, this.#odd) : data(json);
    if (this.#dropAfter !== undefined && this.#sent >= this.#dropAfter) {
      this.#drop(line);
      return;
    }
    this.#sent++;
    if (malformed && this.#odd++ % 3 === 2) this.#res.write(junk(this.#junk++));
    if (split) {
      const bytes = Buffer.from(line);
      let cut = 0;
      while (cut < bytes.length && (bytes[cut] ?? 0) < 0xc0) cut++;
      if (cut < bytes.length) {
        this.#res.write(bytes.subarray(0, cut + 1));
        this.#res.write(bytes.subarray(cut + 1));
        return;
      }
    }
    this.#res.write(line);
  }

  /** Writes the final events and closes the connection normally. */
  end(final: string): void {
    if (this.closed) return;
    if (final !== "") this.#res.write(final);
    this.#res.end();
    this.#close("ended");
  }

  /** Cuts the connection abruptly: half an event, then the socket is destroyed. */
  #drop(line: string): void {
    const bytes = Buffer.from(line);
    const socket = this.#res.socket;
    this.#close("dropped");
    this.#res.write(bytes.subarray(0, Math.max(1, bytes.length >> 1)), () => socket?.destroy());
    // If the write never flushes, still make sure the socket goes away.
    setImmediate(() => socket?.destroy());
  }

  destroy(reason: "shutdown"): void {
    if (this.closed) return;
    this.#close(reason);
    this.#res.socket?.destroy();
  }

  #close(reason: "ended" | "client" | "dropped" | "shutdown"): void {
    this.closed = true;
    clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
    this.#run.streams.delete(this);
    this.#events.emit("streamClose", this.#run.id, reason);
  }
}

/**
 * `abuse=comments`: one event that never ends. Each line of data is followed by a comment
 * line and never by the blank line that would end the event, for as long as the client reads.
 */
export function endlessEvent(res: ServerResponse): void {
  const line = `data: ${"x".repeat(60_000)}\n: still here\n`;
  const write = (): void => {
    while (!res.destroyed && res.write(line));
  };
  res.on("drain", write);
  res.on("error", () => {}); // the client hangs up: that is the point
  write();
}
