/**
 * Event shapes of the `realtime=true` stream, in the three formats seen in the wild
 * (see directives.ts), plus the junk lines of `malformed` mode. Functions return the JSON
 * of one event (to be wrapped as `data: <json>\n\n`) or whole SSE blocks.
 */
import type { StreamFormat } from "../directives.ts";

export type FinalStatus = "completed" | "failed" | "stopped";

export interface EventRun {
  id: string;
  messageId: string;
  createdAt: number;
}

export function data(json: string): string {
  return `data: ${json}\n\n`;
}

const CHUNK_METADATA = JSON.stringify({ stream_status: "chunk" });
const COMPLETE_METADATA = JSON.stringify({ stream_status: "complete" });
const ACK_METADATA = JSON.stringify({ is_acknowledgment: true });

/** What a stream sends first, before any content. */
export function openingEvents(format: StreamFormat, run: EventRun, running: boolean): string {
  switch (format) {
    case "contract":
      return running
        ? data(JSON.stringify({ type: "status", status: "running", agent_run_id: run.id }))
        : "";
    case "agent":
      return (
        (running ? data(JSON.stringify({ type: "status", status: "running" })) : "") +
        data(
          JSON.stringify({
            type: "assistant",
            content: JSON.stringify({
              role: "assistant",
              content: "ACK-SHOULD-NOT-APPEAR: on it.",
            }),
            metadata: ACK_METADATA,
            sequence: 0,
            message_id: `ack_${run.id}`,
          }),
        )
      );
    case "minimal":
      return "";
  }
}

/** One content chunk (JSON only). */
export function contentJson(
  format: StreamFormat,
  run: EventRun,
  delta: string,
  chunkId: number | undefined,
  now: number,
): string {
  switch (format) {
    case "contract":
      return JSON.stringify({
        type: "content",
        content: delta,
        chunk_id: chunkId,
        agent_run_id: run.id,
        elapsed: Math.round(now - run.createdAt) / 1000,
      });
    case "agent":
      return JSON.stringify({
        type: "assistant",
        content: JSON.stringify({ role: "assistant", content: delta }),
        metadata: CHUNK_METADATA,
        sequence: chunkId,
        message_id: run.messageId,
      });
    case "minimal":
      return JSON.stringify({ role: "assistant", content: delta });
  }
}

/** What a stream sends after the run ended, before the server closes it. */
export function finalEvents(
  format: StreamFormat,
  run: EventRun,
  status: FinalStatus,
  wholeContent: string,
  lastChunkId: number,
  error: string | undefined,
  variant: number,
): string {
  switch (format) {
    case "contract":
      return data(
        JSON.stringify({
          type: "status",
          status,
          agent_run_id: run.id,
          ...(error === undefined ? {} : { error }),
        }),
      );
    case "agent": {
      const complete =
        status === "completed"
          ? data(
              JSON.stringify({
                type: "assistant",
                content: JSON.stringify({ role: "assistant", content: wholeContent }),
                metadata: COMPLETE_METADATA,
                sequence: lastChunkId + 1,
                message_id: run.messageId,
              }),
            )
          : "";
      const message =
        status === "failed"
          ? error
          : status === "stopped"
            ? "Agent run stopped"
            : "Agent run completed";
      return complete + data(JSON.stringify({ type: "status", status, message }));
    }
    case "minimal": {
      if (status === "failed") {
        return data(JSON.stringify({ status_type: "error", message: error ?? "Agent run failed" }));
      }
      if (status === "stopped") {
        return data(JSON.stringify({ status_type: "thread_run_end", status: "stopped" }));
      }
      const finish = data(JSON.stringify({ status_type: "finish", finish_reason: "stop" }));
      const end = data(JSON.stringify({ status_type: "thread_run_end" }));
      return variant % 3 === 0 ? finish : variant % 3 === 1 ? end : finish + end;
    }
  }
}

export const KEEP_ALIVE = ": keep-alive\n\n";

/** Noise of `malformed` mode, inserted between real events. None of it carries user content. */
const JUNK: readonly string[] = [
  ": comment from a proxy\n\n",
  "data: this is not JSON at all\n\n",
  'data: {"type":"heartbeat","ts":1700000000}\n\n',
  'data: {"foo":"bar"}\n\n',
  'event: ping\ndata: {"type":"ping"}\n\n',
  "retry: 3000\n\n",
  "data: \n\n",
  "data: []\n\n",
  data(
    JSON.stringify({
      type: "assistant",
      content: JSON.stringify({ role: "assistant", content: "ACK-SHOULD-NOT-APPEAR" }),
      metadata: ACK_METADATA,
    }),
  ),
  'data: {"type":"debug","message":"tool sandbox warmed up"}\n\n',
  "data: null\n\n",
  'data: {"type":"status","status":"running","metadata":{"is_acknowledgment":true}}\n\n',
];

export function junk(index: number): string {
  return JUNK[index % JUNK.length] ?? "";
}

/**
 * One real event, written in one of the spec-valid but unusual SSE spellings of `malformed`
 * mode depending on `index`: `event: message` / `id:` lines, `data:` without a space, the JSON
 * split over two `data:` lines, CRLF line ends.
 */
export function oddlySpelled(json: string, index: number): string {
  switch (index % 6) {
    case 0:
      return `event: message\ndata: ${json}\n\n`;
    case 1:
      return `id: ${index}\ndata: ${json}\n\n`;
    case 2:
      return `data:${json}\n\n`;
    case 3: {
      // Split after the first top-level comma: the joined lines ("\n" between) are still JSON.
      const comma = json.indexOf('",');
      if (comma < 0) return data(json);
      return `data: ${json.slice(0, comma + 2)}\ndata: ${json.slice(comma + 2)}\n\n`;
    }
    case 4:
      return `data: ${json}\r\n\r\n`;
    default:
      return data(json);
  }
}
