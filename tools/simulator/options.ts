/** The simulator's options (checked by zod) and its injectable faults. */
import { z } from "zod";

const fn = <T>() => z.custom<T>((v) => typeof v === "function", { error: "expected a function" });

export const optionsSchema = z.object({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.number().int().min(0).max(65535).default(0),
  apiKeys: z.array(z.string().min(1)).min(1).default(["he-simulator-key"]),
  chunkDelayMs: z.number().min(0).max(60_000).default(40),
  chunkChars: z.number().int().min(1).max(100_000).default(24),
  answerLength: z.number().int().min(0).max(2_000_000).default(1200),
  streamFormat: z.enum(["contract", "agent", "minimal"]).default("contract"),
  reconnect: z.enum(["replay", "continue"]).default("continue"),
  inlineLimitBytes: z.number().int().min(1).default(1_000_000),
  keepAliveMs: z.number().int().min(0).default(5000),
  downloadTtlMs: z
    .number()
    .int()
    .min(1)
    .default(15 * 60_000),
  maxThreads: z.number().int().min(1).default(10_000),
  maxRequestLog: z.number().int().min(0).default(10_000),
  limits: z
    .object({
      maxFiles: z.number().int().min(0),
      maxFileBytes: z.number().int().min(0),
      maxTotalBytes: z.number().int().min(0),
    })
    .partial()
    .default({}),
  logger: fn<(line: string) => void>().optional(),
  onChunk: fn<(runId: string, chunk: string, atMs: number) => void>().optional(),
});

export type SimulatorOptions = z.input<typeof optionsSchema>;

export type FaultEndpoint =
  "create" | "continue" | "result" | "stream" | "history" | "stop" | "files" | "download" | "any";

/**
 * A scripted failure for the next matching request(s), applied after the API key check.
 * With `delayMs` the answer is held that long first; with `reset` the connection is destroyed
 * instead of answered; with `status` an error answer is sent (realistic default `detail` and,
 * for 429/503, rate-limit headers); with neither the request then proceeds normally.
 */
export interface FaultSpec {
  endpoint: FaultEndpoint;
  status?: number;
  detail?: string;
  /** How many requests it applies to (default 1). */
  times?: number;
  delayMs?: number;
  reset?: boolean;
  /** Only requests on this thread. */
  threadId?: string;
  headers?: Record<string, string>;
}

export type ParsedOptions = z.output<typeof optionsSchema>;
