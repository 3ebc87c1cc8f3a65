/** A command line of this project run on this Node, with `env` only (and PATH). */
import { spawn } from "node:child_process";
import { once } from "node:events";

/** Runs `node <args>` and collects what it prints (stdout and stderr, in order) and its exit code. */
export async function runNode(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  // "close", not "exit": what it printed may still be in the pipes when it exits (Node's docs).
  const [code] = (await once(child, "close")) as [number | null];
  return { code, out };
}
