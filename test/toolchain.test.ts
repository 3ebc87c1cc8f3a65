/**
 * The project brings its own Node 24 (the `node` package, a dev dependency whose install script
 * puts the binary in node_modules/.bin), so `npm ci` and every npm script work on a machine
 * whose Node is older; production installs (`npm ci --omit=dev`, the Dockerfile) leave it out.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BOTH_STORES } from "./support/needs.ts";
import { skippedLine } from "./support/skipped-reporter.ts";

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8");
const pkg = JSON.parse(read("package.json")) as {
  engines: { node: string };
  devEngines: { runtime: { name: string; version: string } };
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
  dependencies: Record<string, string>;
  allowScripts: Record<string, boolean>;
};
const lock = JSON.parse(read("package-lock.json")) as {
  packages: Record<string, { version?: string; dev?: boolean; hasInstallScript?: boolean }>;
};
const projectNode = pkg.devDependencies.node ?? "";

describe("the project's own Node", () => {
  it("is an exact Node 24 dev dependency, its install script approved, left out of production", () => {
    expect(projectNode).toMatch(/^24\.\d+\.\d+$/);
    expect(pkg.dependencies.node).toBeUndefined();
    expect(pkg.allowScripts).toEqual({ node: true });
    expect(lock.packages["node_modules/node"]).toMatchObject({ version: projectNode, dev: true });
    // No other package needs its install script: the Dockerfile's playground stage skips them,
    // and npm runs only the approved one. protobufjs (OpenTelemetry's OTLP exporters) has one
    // that only warns about its dependents' version ranges (scripts/postinstall.js).
    const withScripts = Object.entries(lock.packages).filter(([, p]) => p.hasInstallScript);
    expect(withScripts.map(([path]) => path)).toEqual([
      "node_modules/node",
      "node_modules/protobufjs",
    ]);
  });

  it("needs only an npm-capable Node to install, and to run without it a Node the CI tests on", () => {
    expect(pkg.devEngines.runtime).toMatchObject({ name: "node", version: ">=20.17" });
    // `engines` names what .ci/run tests: the project's Node 24 (the whole suite) and the
    // current release (the start-up and proxy paths), each a major.
    const current = /^current_node=(\d+)\.\d+\.\d+$/m.exec(read(".ci/run"))?.[1];
    const ours = projectNode.split(".")[0];
    expect(Number(current)).toBeGreaterThan(Number(ours));
    expect(pkg.engines.node).toBe(`^${ours}.0.0 || ^${current}.0.0`);
    expect(existsSync(new URL("../.npmrc", import.meta.url))).toBe(false); // no engine-strict
  });

  it("runs the start-up and proxy tests on the current release in CI, from a clean clone", () => {
    const ci = read(".ci/run");
    const run = ci.slice(ci.indexOf("current_node="));
    const files = run.match(/test\/\S+\.test\.ts/g) ?? [];
    expect(files).toEqual(
      expect.arrayContaining(["test/startup.test.ts", "test/e2e/proxy.test.ts"]),
    );
    for (const file of files)
      expect(existsSync(new URL(`../${file}`, import.meta.url)), file).toBe(true);
    // Installed apart, with the `node` package's install script allowed there.
    expect(run).toContain('"allowScripts":{"node":true}');
    expect(run).toMatch(/npm install --prefix "\$other"/);
  });

  it("tells nvm, mise and setup-node which Node to use: the project's major", () => {
    expect(read(".nvmrc").trim()).toBe(projectNode.split(".")[0]);
  });

  it("runs every npm script that starts a program on it (node_modules/.bin comes first on PATH)", () => {
    for (const [name, command] of Object.entries(pkg.scripts)) {
      if (/\bnode\b/.test(command))
        expect(command, name).toMatch(/^node --import \.\/scripts\/check-node\.js /);
    }
  });

  it("keeps production installs free of it: the Dockerfile never runs the install script", () => {
    const installs = read("Dockerfile").match(/^RUN npm ci .*$/gm) ?? [];
    expect(installs).toHaveLength(2);
    for (const line of installs) expect(line).toMatch(/ --omit=dev | --ignore-scripts /);
  });

  it.runIf(existsSync(new URL("../node_modules/.bin/node", import.meta.url)))(
    "runs this suite (npm test and npx vitest put node_modules/.bin first on PATH)",
    () => {
      expect(process.versions.node).toBe(projectNode);
    },
  );
});

describe("the run's last line on what was skipped", () => {
  it("names the files and how to enable them, on one line", () => {
    const line = skippedLine([
      { relativeModuleId: "test/store/store.test.ts", missing: ["redis"] },
      { relativeModuleId: "test/e2e/cluster.test.ts", missing: ["redis"] },
      { relativeModuleId: "test/playground/playground.test.ts", missing: ["chromium"] },
      { relativeModuleId: "test/config.test.ts", missing: [] },
    ]);
    expect(line).toBe(
      "Skipped the Redis parts of 2 test files (test/e2e/cluster.test.ts, test/store/store.test.ts): " +
        "to run them, install redis-server (the run starts its own) or set TEST_REDIS_URL; " +
        "the Chromium parts of 1 test file (test/playground/playground.test.ts): " +
        "to run them, install chromium or set CHROMIUM_PATH.",
    );
  });

  it("after `npm run test:unit`, which starts no Redis and no browser, points at `npm test`", () => {
    const modules = [{ relativeModuleId: "test/store/store.test.ts", missing: ["redis" as const] }];
    expect(skippedLine(modules, true)).toBe(
      "Skipped the Redis parts of 1 test file (test/store/store.test.ts): `npm test` runs them.",
    );
  });

  it("says nothing when nothing was skipped", () => {
    expect(skippedLine([{ relativeModuleId: "test/config.test.ts", missing: [] }])).toBeUndefined();
  });
});

describe("the end-to-end files that run on both stores (test/support/needs.ts)", () => {
  it("names files that exist and take their stores from storeBackends(), each with a reason", () => {
    expect(Object.keys(BOTH_STORES).length).toBeGreaterThan(0);
    for (const [file, reason] of Object.entries(BOTH_STORES)) {
      expect(existsSync(new URL(`../${file}`, import.meta.url)), file).toBe(true);
      expect(read(file), file).toContain("storeBackends()");
      expect(reason.length, file).toBeGreaterThan(20);
    }
  });
});
