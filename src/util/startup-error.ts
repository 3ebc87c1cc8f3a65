/** The error that stops start-up with one line (no stack trace), for every part of the app. */

/** Start-up failed for a reason one line can tell (printed as it is, with no stack trace). */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupError";
  }
}

/** Why a server cannot listen where it was told, by the code of Node's listen error. */
const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: "is already in use",
  EACCES: "needs privileges this process lacks",
  EADDRNOTAVAIL: "is not an address of this machine",
};

interface ListenError {
  code: string;
  syscall: "listen";
  address?: string;
  port?: number;
}

function isListenError(err: unknown): err is ListenError {
  const e = err as Partial<ListenError> | null;
  return (
    typeof e === "object" && e !== null && e.syscall === "listen" && typeof e.code === "string"
  );
}

/**
 * A failure at start-up as a StartupError when one line can say it: a StartupError itself, or a
 * server that cannot listen (a busy or forbidden port), naming the setting to change:
 * `ports` maps each setting (PORT, SIM_PORT…) to the port it asked for. Anything else
 * (a bug) is returned unchanged, to keep its stack.
 */
export function asStartupError(
  err: unknown,
  ports: Readonly<Record<string, number | undefined>> = {},
): unknown {
  if (err instanceof StartupError || !isListenError(err)) return err;
  const why = LISTEN_FAILURES[err.code];
  if (why === undefined) return err;
  const setting = Object.keys(ports).find((name) => ports[name] === err.port);
  const host = err.address ?? "";
  const where = `${host.includes(":") ? `[${host}]` : host}:${err.port ?? "?"}`;
  const stop = err.code === "EADDRINUSE" ? "stop what uses it, or " : "";
  const fix = `${stop}${setting ? `set ${setting} to another port` : "choose another port"}`;
  return new StartupError(`port ${where} ${why} (${err.code}): ${fix}`);
}

/**
 * For an entry point's start-up: exits 1 with `Could not start: …` on one line (stderr) when
 * `asStartupError` can say what failed; otherwise throws `err` as it is.
 */
export function exitOnStartupError(
  err: unknown,
  ports: Readonly<Record<string, number | undefined>> = {},
): never {
  const failure = asStartupError(err, ports);
  if (!(failure instanceof StartupError)) throw err;
  process.stderr.write(`Could not start: ${failure.message}\n`);
  process.exit(1);
}
