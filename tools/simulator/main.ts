/**
 * `npm run simulator`: the Task Execution Service simulator on a fixed port, for developers.
 *
 * Environment: SIM_PORT (default 8787), SIM_HOST (default 127.0.0.1), SIM_API_KEYS or
 * SIM_API_KEY (the keys it accepts, comma-separated, default he-simulator-key),
 * SIM_CHUNK_DELAY_MS, SIM_CHUNK_CHARS, SIM_ANSWER_LENGTH, SIM_STREAM_FORMAT (contract|agent|minimal), SIM_RECONNECT
 * (replay|continue), SIM_KEEPALIVE_MS, SIM_QUIET=1 (no request log).
 */
import { z } from "zod";
import { exitOnStartupError } from "../../src/util/startup-error.ts";
import { startSimulator } from "./server.ts";

const number = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { error: "expected a whole number" })
    .transform(Number)
    .pipe(z.number().min(min).max(max))
    .optional();

const env = z
  .object({
    SIM_PORT: number(0, 65535).default(8787),
    SIM_HOST: z.string().min(1).default("127.0.0.1"),
    SIM_API_KEY: z
      .string()
      .default("he-simulator-key")
      .transform((v) =>
        v
          .split(",")
          .map((k) => k.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.string()).min(1, { error: "at least one API key" })),
    SIM_CHUNK_DELAY_MS: number(0, 60_000),
    SIM_CHUNK_CHARS: number(1, 100_000),
    SIM_ANSWER_LENGTH: number(0, 2_000_000),
    SIM_STREAM_FORMAT: z.enum(["contract", "agent", "minimal"]).optional(),
    SIM_RECONNECT: z.enum(["replay", "continue"]).optional(),
    SIM_KEEPALIVE_MS: number(0, 3_600_000),
    SIM_QUIET: z.enum(["0", "1", "true", "false"]).optional(),
  })
  // SIM_API_KEYS (the plural, as the app's ENCRYPTION_KEYS) wins over SIM_API_KEY.
  .safeParse({ ...process.env, SIM_API_KEY: process.env.SIM_API_KEYS ?? process.env.SIM_API_KEY });

if (!env.success) {
  // One line per setting, as the app's own configuration problems.
  for (const issue of env.error.issues) {
    const name = String(issue.path[0] ?? "environment");
    console.error(`Invalid simulator configuration: ${name} ${issue.message}`);
  }
  process.exit(2);
}
const e = env.data;
const quiet = e.SIM_QUIET === "1" || e.SIM_QUIET === "true";

const sim = await startSimulator({
  host: e.SIM_HOST,
  port: e.SIM_PORT,
  apiKeys: e.SIM_API_KEY,
  chunkDelayMs: e.SIM_CHUNK_DELAY_MS,
  chunkChars: e.SIM_CHUNK_CHARS,
  answerLength: e.SIM_ANSWER_LENGTH,
  streamFormat: e.SIM_STREAM_FORMAT,
  reconnect: e.SIM_RECONNECT,
  keepAliveMs: e.SIM_KEEPALIVE_MS,
  logger: quiet ? undefined : (line) => console.log(`[sim] ${line}`),
}).catch((err: unknown) => exitOnStartupError(err, { SIM_PORT: e.SIM_PORT }));

console.log(
  `Task Execution Service simulator listening on ${sim.url}  (API key: ${sim.apiKeys.join(", ")})`,
);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    process.exit(1); // a second signal: give up waiting
  }
  stopping = true;
  console.log(`${signal}: closing the simulator`);
  await sim.close();
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
