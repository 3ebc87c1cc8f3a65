import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { parseConfig, SETTINGS, SHUTDOWN_DEADLINE_MS } from "../../src/config/config.ts";
import { SLACK_EVENTS_PATH } from "../../src/slack/app.ts";
import { HEALTH_PATHS } from "../../src/slack/health.ts";
import { restrictedViolations } from "./pod-security.ts";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

type Doc = Record<string, unknown>;
const at = (v: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((o, k) => (o as Record<string | number, unknown> | undefined)?.[k], v);

const kube: Doc[] = readdirSync(new URL("../../deploy/kubernetes/", import.meta.url))
  .filter((f) => f.endsWith(".yaml"))
  .flatMap((f) => parseAllDocuments(read(`deploy/kubernetes/${f}`)).map((d) => d.toJSON() as Doc));
const byKind = (kind: string) => kube.find((d) => d.kind === kind);

describe("the Kubernetes example", () => {
  const deployment = byKind("Deployment");
  const container = at(deployment, "spec", "template", "spec", "containers", 0) as Doc;
  const env = (at(container, "env") as { name: string; value?: string }[]) ?? [];

  it("runs two replicas, pausing before SIGTERM while endpoints drain, with a grace period longer than that pause and the app's shutdown together", () => {
    expect(at(deployment, "spec", "replicas")).toBe(2);
    const grace = at(deployment, "spec", "template", "spec", "terminationGracePeriodSeconds");
    // Endpoint removal reaches kube-proxy and ingresses within seconds; 5 s at the least.
    const pause = Number(at(container, "lifecycle", "preStop", "sleep", "seconds"));
    expect(pause).toBeGreaterThanOrEqual(5);
    // The grace period counts from before the preStop hook.
    expect(Number(grace) * 1000).toBeGreaterThan(pause * 1000 + SHUTDOWN_DEADLINE_MS);
  });

  it("probes the app's own liveness and readiness routes on its internal port, which the Service does not expose", () => {
    expect(at(container, "startupProbe", "httpGet", "path")).toBe(HEALTH_PATHS.liveness);
    expect(at(container, "livenessProbe", "httpGet", "path")).toBe(HEALTH_PATHS.liveness);
    expect(at(container, "readinessProbe", "httpGet", "path")).toBe(HEALTH_PATHS.readiness);
    // The start-up probe, not a delay, holds liveness off: a start may take a minute.
    expect(at(container, "livenessProbe", "initialDelaySeconds")).toBeUndefined();
    const startup = at(container, "startupProbe") as Doc;
    expect(Number(startup.periodSeconds) * Number(startup.failureThreshold)).toBeGreaterThanOrEqual(
      60,
    );
    const ports = at(container, "ports") as { name: string; containerPort: number }[];
    const [slack, admin] = [
      ports.find((p) => p.name === "http"),
      ports.find((p) => p.name === "admin"),
    ];
    const value = (name: string) => env.find((e) => e.name === name)?.value;
    expect(String(slack?.containerPort)).toBe(value("PORT"));
    // Metrics and health off the public Slack port: on ADMIN_PORT, on the pod's address.
    expect(String(admin?.containerPort)).toBe(value("ADMIN_PORT"));
    expect(value("ADMIN_HOST")).toBe("0.0.0.0");
    for (const probe of ["startupProbe", "livenessProbe", "readinessProbe"]) {
      expect(at(container, probe, "httpGet", "port")).toBe("admin");
    }
    const service = byKind("Service");
    const servicePorts = at(service, "spec", "ports") as { targetPort: string }[];
    expect(servicePorts.map((p) => p.targetPort)).toEqual(["http"]);
    expect(at(service, "spec", "selector")).toEqual(
      at(deployment, "spec", "selector", "matchLabels"),
    );
  });

  it("sets only settings the app reads, and enough of them to start in HTTP mode", () => {
    for (const e of env) expect(SETTINGS).toContain(e.name);
    const secret = byKind("Secret");
    const secretKeys = Object.keys((at(secret, "stringData") as Doc) ?? {});
    for (const key of secretKeys) expect(SETTINGS).toContain(key);
    // What the pod would see, with placeholder secrets: the app's own parser accepts it.
    const podEnv = Object.fromEntries([
      ...env.map((e) => [e.name, e.value ?? "from-secret"]),
      ["SLACK_BOT_TOKEN", "xoxb-placeholder"],
      ["ENCRYPTION_KEY", Buffer.alloc(32, 7).toString("base64")],
      ["REDIS_URL", String(at(secret, "stringData", "REDIS_URL"))],
    ]);
    const config = parseConfig(podEnv);
    expect(config.redisUrl).toMatch(/^redis:\/\//); // two replicas need the shared store
    expect(config.slack.signingSecret).toBeDefined(); // HTTP mode behind the Service
  });

  it('passes the "restricted" Pod Security Standard, with a read-only root and writable volumes where the app writes', () => {
    const template = at(deployment, "spec", "template") as Doc;
    expect(restrictedViolations(template.spec as Doc, template.metadata as Doc)).toEqual([]);
    expect(at(container, "securityContext", "readOnlyRootFilesystem")).toBe(true);
    // Where the app writes: temporary files, and the embedded store's DATA_DIR (the image's).
    const mounts = (at(container, "volumeMounts") as { mountPath: string }[]).map(
      (m) => m.mountPath,
    );
    expect(mounts).toEqual(expect.arrayContaining(["/tmp", "/data"]));
    expect(read("Dockerfile")).toMatch(/DATA_DIR=\/data\b/);
    // The image's user (`USER node`, uid 1000).
    expect(at(template, "spec", "securityContext", "runAsUser")).toBe(1000);
  });

  it("checks each control of the standard: a pod breaking any one of them is refused", () => {
    const template = at(deployment, "spec", "template") as Doc;
    const good = template.spec as Doc;
    const broken = (change: (spec: Doc & { containers: Doc[] }) => void) => {
      const spec = structuredClone(good) as Doc & { containers: Doc[] };
      change(spec);
      return restrictedViolations(spec);
    };
    const sc = (spec: { containers: Doc[] }) => spec.containers[0]?.securityContext as Doc;
    const cases: [string, (spec: Doc & { containers: Doc[] }) => void][] = [
      ["hostNetwork", (p) => (p.hostNetwork = true)],
      ["privileged", (p) => (sc(p).privileged = true)],
      ["hostPort", (p) => ((at(p, "containers", 0, "ports", 0) as Doc).hostPort = 3000)],
      ["hostPath", (p) => (p.volumes as Doc[]).push({ name: "h", hostPath: { path: "/" } })],
      ["nfs", (p) => (p.volumes as Doc[]).push({ name: "n", nfs: { server: "x", path: "/" } })],
      ["allowPrivilegeEscalation", (p) => delete sc(p).allowPrivilegeEscalation],
      ["runAsNonRoot", (p) => delete (p.securityContext as Doc).runAsNonRoot],
      ["runAsUser", (p) => (sc(p).runAsUser = 0)],
      ["seccompProfile", (p) => delete (p.securityContext as Doc).seccompProfile],
      ["seccompProfile", (p) => (sc(p).seccompProfile = { type: "Unconfined" })],
      ["capabilities.drop", (p) => (sc(p).capabilities = {})],
      ["SYS_ADMIN", (p) => (sc(p).capabilities = { drop: ["ALL"], add: ["SYS_ADMIN"] })],
      ["procMount", (p) => (sc(p).procMount = "Unmasked")],
      ["sysctl", (p) => ((p.securityContext as Doc).sysctls = [{ name: "kernel.msgmax" }])],
      [
        "host",
        (p) => ((at(p, "containers", 0, "livenessProbe", "httpGet") as Doc).host = "10.0.0.1"),
      ],
    ];
    for (const [control, change] of cases) {
      expect(broken(change).join("\n"), control).toContain(control);
    }
    // What the standard allows stays allowed.
    expect(
      broken((p) => (sc(p).capabilities = { drop: ["ALL"], add: ["NET_BIND_SERVICE"] })),
    ).toEqual([]);
  });

  it("keeps a replica up during drains", () => {
    const pdb = byKind("PodDisruptionBudget");
    expect(at(pdb, "spec", "minAvailable")).toBe(1);
    expect(at(pdb, "spec", "selector")).toEqual(at(deployment, "spec", "selector"));
  });
});

describe("docker-compose.yml", () => {
  const compose = parse(read("docker-compose.yml")) as Doc;
  const app = at(compose, "services", "app") as Doc;

  it("gives the app only settings it reads, Redis, and a stop grace above its shutdown", () => {
    const env = at(app, "environment") as Record<string, string>;
    for (const name of Object.keys(env)) expect(SETTINGS).toContain(name);
    // Redis asks for a password, and the app's URL carries the same one.
    expect(env.REDIS_URL).toBe("redis://:${REDIS_PASSWORD:-task-agent-local-redis}@redis:6379");
    const redis = at(compose, "services", "redis") as Doc;
    expect(at(redis, "environment", "REDIS_PASSWORD")).toBe(
      "${REDIS_PASSWORD:-task-agent-local-redis}",
    );
    expect(String(at(redis, "command", 2))).toContain('--requirepass "$$REDIS_PASSWORD"');
    expect(String(at(redis, "healthcheck", "test", 1))).toContain("REDISCLI_AUTH");
    expect(at(redis, "ports")).toBeUndefined();
    // Metrics and health on the internal port, where the image's health check looks.
    expect(env.ADMIN_PORT).toBe("9090");
    expect(read("Dockerfile")).toContain("process.env.ADMIN_PORT||process.env.PORT");
    expect(at(app, "stop_signal")).toBe("SIGTERM");
    expect(Number(String(at(app, "stop_grace_period")).replace(/s$/, "")) * 1000).toBeGreaterThan(
      SHUTDOWN_DEADLINE_MS,
    );
    expect(at(app, "ports", 0)).toBe(`127.0.0.1:${env.PORT}:${env.PORT}`);
  });

  it("publishes every port on 127.0.0.1 only", () => {
    const services = Object.values(at(compose, "services") as Record<string, Doc>);
    const published = services.flatMap((svc) => (at(svc, "ports") as string[] | undefined) ?? []);
    expect(published.length).toBeGreaterThan(0);
    for (const port of published) expect(port).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
  });

  it("needs no account to come up: no variable is required, and the demo profile has the playground", () => {
    // A `${VAR:?message}` would stop `docker compose --profile demo up` before anything starts.
    expect(read("docker-compose.yml")).not.toMatch(/\$\{[A-Za-z_]+:?\?/);
    const playground = at(compose, "services", "playground") as Doc;
    expect(at(playground, "profiles")).toEqual(["demo"]);
    // Built from the Dockerfile's playground stage, which runs `npm run playground`'s program.
    const target = String(at(playground, "build", "target"));
    const stage = dockerStages(read("Dockerfile")).get(target) ?? "";
    expect(stage).toMatch(/^CMD \["node", "tools\/playground\/main\.ts"\]$/m);
    expect(stage).toMatch(/^USER node$/m);
    for (const copied of ["src", "tools", "manifest.yml"]) {
      expect(stage).toContain(`COPY ${copied} `);
      expect(read(".dockerignore").split("\n")).not.toContain(copied);
    }
    expect(read("package.json")).toContain(
      `"playground": "node --import ./scripts/check-node.js tools/playground/main.ts"`,
    );
    // It listens on every interface of the container, on the port compose publishes.
    const env = at(playground, "environment") as Record<string, string>;
    const main = read("tools/playground/main.ts");
    for (const name of Object.keys(env)) expect(main).toContain(name);
    expect(env.PLAYGROUND_HOST).toBe("0.0.0.0");
    expect(at(playground, "ports", 0)).toBe(
      `127.0.0.1:${env.PLAYGROUND_PORT}:${env.PLAYGROUND_PORT}`,
    );
  });

  it("passes the proxy settings on, with the simulator reached directly", () => {
    const env = at(app, "environment") as Record<string, string>;
    for (const name of ["HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"]) expect(env).toHaveProperty(name);
    expect(env.TASK_API_URL).toContain("http://simulator:");
    expect(env.NO_PROXY).toBe("${NO_PROXY:-simulator}");
  });

  // What the container gets when nothing is set: each `${VAR:-default}` is its default.
  const defaults = () =>
    Object.fromEntries(
      Object.entries(at(app, "environment") as Record<string, string>).map(([k, v]) => [
        k,
        v.replace(/\$\{[A-Za-z_]+:-([^}]*)\}/g, "$1"),
      ]),
    );
  const tokens = { SLACK_BOT_TOKEN: "xoxb-placeholder", SLACK_SIGNING_SECRET: "placeholder" };

  it("starts with its own defaults: the demo simulator's plain http:// is allowed by name", () => {
    expect(parseConfig({ ...defaults(), ...tokens }).service.baseUrl).toBe("http://simulator:8787");
    expect(() => parseConfig({ ...defaults(), ...tokens, ALLOW_INSECURE_HTTP: "false" })).toThrow(
      /TASK_API_URL uses plain http:\/\/ to simulator/,
    );
  });

  it("is not insecure by default: plain http:// to any host but the demo's simulator stops the app", () => {
    const env = at(app, "environment") as Record<string, string>;
    expect(env.ALLOW_INSECURE_HTTP).toBe("${ALLOW_INSECURE_HTTP:-simulator}");
    expect(defaults().ALLOW_INSECURE_HTTP).not.toMatch(/^(true|1|yes|on)$/i);
    for (const [name, url] of [
      ["TASK_API_URL", "http://tasks.example.com"],
      ["TASK_API_URL", "http://10.0.0.7:8787"],
      ["TASK_API_URL", "http://simulator.example.com:8787"],
      ["SLACK_API_URL", "http://slack.example.com/api/"],
    ] as const) {
      expect(() => parseConfig({ ...defaults(), ...tokens, [name]: url })).toThrow(
        new RegExp(`${name} uses plain http://`),
      );
    }
    expect(
      parseConfig({ ...defaults(), ...tokens, TASK_API_URL: "https://tasks.example.com" }).service
        .baseUrl,
    ).toBe("https://tasks.example.com");
  });

  it("runs the simulator only in the demo profile, where the app points by default", () => {
    const sim = at(compose, "services", "simulator") as Doc;
    expect(at(sim, "profiles")).toEqual(["demo"]);
    // A development tool: from the playground's image (which has tools/), not the app's.
    expect(at(sim, "build", "target")).toBe("playground");
    expect(at(sim, "command")).toEqual(["node", "tools/simulator/main.ts"]);
    const simEnv = at(sim, "environment") as Record<string, string>;
    const simulatorMain = read("tools/simulator/main.ts");
    for (const name of Object.keys(simEnv)) expect(simulatorMain).toContain(name);
    const appEnv = at(app, "environment") as Record<string, string>;
    expect(appEnv.TASK_API_URL).toContain(`http://simulator:${simEnv.SIM_PORT}`);
    expect(appEnv.TASK_API_KEY).toContain(simEnv.SIM_API_KEY);
  });
});

/** The Dockerfile's build stages, each from its FROM line on, by name (the last one: ""). */
function dockerStages(dockerfile: string): Map<string, string> {
  const stages = dockerfile.split(/^(?=FROM )/m).filter((s) => s.startsWith("FROM "));
  return new Map(
    stages.map((s, i) => [
      /^FROM \S+ AS (\S+)/.exec(s)?.[1] ?? (i === stages.length - 1 ? "" : String(i)),
      s,
    ]),
  );
}

describe("the Dockerfile", () => {
  const dockerfile = read("Dockerfile");
  // `docker build .` builds the last stage: the app.
  const app = dockerStages(dockerfile).get("") ?? "";

  it("runs as the non-root node user, stops on SIGTERM and checks the liveness route", () => {
    expect(app).toMatch(/^USER node$/m);
    expect(app).toMatch(/^STOPSIGNAL SIGTERM$/m);
    expect(app).toMatch(new RegExp(`HEALTHCHECK[\\s\\S]*${HEALTH_PATHS.liveness}`));
    const port = /\bPORT=(\d+)/.exec(app)?.[1];
    expect(app).toMatch(new RegExp(`^EXPOSE ${port}$`, "m"));
    expect(app).toMatch(/^CMD \["node", "src\/main\.ts"\]$/m);
  });

  it("makes the data directory the app's alone", () => {
    expect(app).toMatch(/chown node:node \/data && chmod 700 \/data/);
  });

  it("adds Debian's chromium for page previews only when built with WITH_CHROMIUM=1", () => {
    expect(app).toMatch(/^ARG WITH_CHROMIUM=0$/m);
    const install = /^RUN if \[ "\$WITH_CHROMIUM" = "1" \];[\s\S]*?fi$/m.exec(app)?.[0] ?? "";
    expect(install).toMatch(/apt-get install -y --no-install-recommends chromium/);
    // Installed as root, run as node: Chromium keeps its sandbox (it refuses it only to root).
    expect(app.indexOf(install)).toBeLessThan(app.indexOf("USER node"));
  });

  it("keeps data, dependencies, tests and a local .env (secrets) out of the build context", () => {
    const ignored = read(".dockerignore").split("\n");
    for (const entry of ["data", "node_modules", "test", ".env"]) expect(ignored).toContain(entry);
  });

  it("builds every stage on Node 24 on Debian 13 (trixie), the current stable, slim", () => {
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    const major = (
      JSON.parse(read("package.json")) as { devDependencies: { node: string } }
    ).devDependencies.node.split(".")[0];
    expect(base).toBe(`node:${major}-trixie-slim`);
    const froms = dockerfile.match(/^FROM .*$/gm) ?? [];
    expect(froms.length).toBe(3);
    for (const from of froms) expect(from).toMatch(/^FROM \$\{NODE_IMAGE\}( AS \S+)?$/);
  });

  it("runs the app under an init process (tini) that reaps orphans and passes signals on", () => {
    expect(app).toMatch(/apt-get install -y --no-install-recommends tini\b/);
    expect(app.indexOf("install -y --no-install-recommends tini")).toBeLessThan(
      app.indexOf("USER node"),
    );
    expect(app).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
    // The compose services that override the command still run under it.
    expect(at(parse(read("docker-compose.yml")), "services", "app", "entrypoint")).toBeUndefined();
  });

  it("labels the image with the OCI annotations, its version the package's", () => {
    const labels = Object.fromEntries(
      [...app.matchAll(/(org\.opencontainers\.image\.[a-z.]+)="([^"]*)"/g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    for (const key of ["title", "description", "version", "revision", "created", "source"]) {
      expect(labels[`org.opencontainers.image.${key}`], key).toBeTruthy();
    }
    expect(labels["org.opencontainers.image.version"]).toBe("${VERSION}");
    const version = (JSON.parse(read("package.json")) as { version: string }).version;
    expect(app).toMatch(new RegExp(`^ARG VERSION=${version.replaceAll(".", "\\.")}$`, "m"));
    expect(labels["org.opencontainers.image.base.name"]).toBe("docker.io/library/${NODE_IMAGE}");
  });

  it("serves Slack on the path the manifest's HTTP mode names", () => {
    expect(read("manifest.yml")).toContain(SLACK_EVENTS_PATH);
  });
});
