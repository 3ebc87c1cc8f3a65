// Preloaded before the app (`node --import ./scripts/check-node.js src/main.ts`): plain
// JavaScript, so that an old Node says which version it needs instead of failing on `.ts`.
import { existsSync, readFileSync } from "node:fs";

/**
 * The lowest version `engines.node` allows, as [major, minor]: of ">=MAJOR.MINOR", or of the
 * lowest alternative of "^24.0.0 || ^26.0.0". Only older versions are refused: they lack the type
 * stripping the app runs on; a newer one may print npm's engine warning, and runs.
 */
export function requiredVersion(range) {
  const lows = (range ?? "")
    .split("||")
    .map((part) => /^\s*(?:>=|\^)\s*(\d+)(?:\.(\d+))?/.exec(part))
    .filter((m) => m !== null)
    .map((m) => [Number(m[1]), Number(m[2] ?? 0)]);
  lows.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return lows[0];
}

/**
 * The sentence to print when `version` is older than `range` allows, or undefined.
 * `projectNode`: whether `npm ci` has installed the project's own Node (the `node` dev
 * dependency, node_modules/.bin/node), which every npm script runs on.
 */
export function nodeVersionProblem(version, range, projectNode = false) {
  const need = requiredVersion(range);
  if (!need) return undefined;
  const [major = 0, minor = 0] = version.replace(/^v/, "").split(".").map(Number);
  if (major > need[0] || (major === need[0] && minor >= need[1])) return undefined;
  const how = projectNode
    ? "The project's own Node 24 is installed (node_modules/.bin/node): run the app through " +
      "npm (`npm start`, `npm run playground`…), which puts it first on PATH, or `npx node …`."
    : "`npm ci` (with the dev dependencies) installs the project's own Node 24, which every " +
      "npm script then runs on; on a server, install Node 24 from https://nodejs.org or with " +
      "a version manager (`nvm install 24`).";
  return (
    `This app needs Node.js ${need[0]}.${need[1]} or newer (Node 24 LTS recommended); ` +
    `this is Node ${version.replace(/^v/, "")}. It runs its TypeScript sources with Node's ` +
    `built-in type stripping, and is tested on Node ${range.trim()}. ${how}`
  );
}

const root = new URL("../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
const problem = nodeVersionProblem(
  process.versions.node,
  pkg.engines?.node,
  existsSync(new URL("node_modules/.bin/node", root)),
);
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
