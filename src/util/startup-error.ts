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

/** A StartupError when one line can say it (naming the setting in `ports`); else unchanged. */
export function asStartupError(
  err: unknown,
  ports: Readonly<Record<string, number | undefined>> = {},
): unknown {
  if (err instanceof StartupError || typeof err !== "object" || err === null) return err;
  const { code, syscall, address, port } = err as Partial<Record<string, unknown>>;
  const why = syscall === "listen" && typeof code === "string" ? LISTEN_FAILURES[code] : undefined;
  if (why === undefined) return err;
  const setting = Object.keys(ports).find((name) => ports[name] === port);
  const host = typeof address === "string" ? address : "";
  const where = `${host.includes(":") ? `[${host}]` : host}:${typeof port === "number" ? port : "?"}`;
  const stop = code === "EADDRINUSE" ? "stop what uses it, or " : "";
  const fix = `${stop}${setting ? `set ${setting} to another port` : "choose another port"}`;
  return new StartupError(`port ${where} ${why} (${code}): ${fix}`);
}

/** Exits 1 with `Could not start: …` on one line when `asStartupError` can say it; else throws. */
export function exitOnStartupError(
  err: unknown,
  ports: Readonly<Record<string, number | undefined>> = {},
): never {
  const failure = asStartupError(err, ports);
  if (!(failure instanceof StartupError)) throw err;
  process.stderr.write(`Could not start: ${failure.message}\n`);
  process.exit(1);
}
