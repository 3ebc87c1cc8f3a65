/**
 * `npm test`'s static checks: the type-check, ESLint, Prettier and the layer rules, as their own npm
 * scripts, at the same time rather than one after another. Each one's output is held until it
 * ends, then printed whole under its name, so that nothing interleaves; the exit code is non-zero
 * when any of them failed, and the last line says which. Written here rather than taken from a
 * package (npm-run-all2's run-p): a few lines of child_process do it.
 */
import { spawn } from "node:child_process";

const CHECKS = ["typecheck", "lint:code", "lint:format", "lint:deps"];

interface Outcome {
  readonly name: string;
  readonly ok: boolean;
  readonly seconds: number;
}

/** Runs `npm run <name>`, prints its output whole when it ends, and says how it went. */
function run(name: string): Promise<Outcome> {
  const started = performance.now();
  // The checks' colours, when a person is watching.
  const env = process.stdout.isTTY ? { ...process.env, FORCE_COLOR: "1" } : process.env;
  const child = spawn("npm", ["run", "--silent", name], { env, stdio: ["ignore", "pipe", "pipe"] });
  const output: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => output.push(chunk));
  return new Promise((resolve) => {
    let ended = false;
    const end = (ok: boolean, why = "") => {
      if (ended) return; // a child that fails to start reports "error", then "close"
      ended = true;
      const seconds = (performance.now() - started) / 1000;
      const text = Buffer.concat(output).toString("utf8").trimEnd();
      const status = ok ? "passed" : `FAILED${why}`;
      console.log(`── npm run ${name}: ${status} in ${seconds.toFixed(1)} s`);
      if (text) console.log(text);
      resolve({ name, ok, seconds });
    };
    child.on("error", (err) => end(false, ` (${err.message})`));
    child.on("close", (code, signal) =>
      end(code === 0, code === null ? ` (${signal})` : ` (exit code ${code})`),
    );
  });
}

const outcomes = await Promise.all(CHECKS.map(run));
const failed = outcomes.filter((o) => !o.ok).map((o) => `npm run ${o.name}`);
if (failed.length > 0) {
  console.log(`Static checks failed: ${failed.join(", ")} (output above).`);
  process.exit(1);
}
console.log(`Static checks passed: ${CHECKS.map((c) => `npm run ${c}`).join(", ")}.`);
