/**
 * `GET /metrics` for an operator's Prometheus: the text exposition format, Node's process
 * metrics, and the app's counters moving when a task runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Harness } from "../support/harness.ts";
import { until } from "../support/until.ts";

/** The value of one sample line (`name{labels} value`), or 0 when it is not there. */
function sample(text: string, name: string, labels = ""): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

describe("Prometheus metrics", () => {
  let h: Harness;
  let base: string;
  beforeAll(async () => {
    h = await Harness.start();
    base = `http://127.0.0.1:${h.app.port}`;
  });
  afterAll(async () => {
    await h?.close();
  });

  it("answers in the text format with the app's metric families and Node's process metrics", async () => {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const family of [
      "# TYPE process_resident_memory_bytes gauge",
      "# TYPE taskbot_slack_calls_total counter",
      "# TYPE taskbot_slack_queue_wait_seconds histogram",
      "# TYPE taskbot_runs_active gauge",
      "# TYPE taskbot_runs_ended_total counter",
      "# TYPE taskbot_chunk_to_slack_lag_seconds histogram",
      "# TYPE taskbot_service_requests_total counter",
      "# TYPE taskbot_service_request_duration_seconds histogram",
      "# TYPE taskbot_store_errors_total counter",
      "# TYPE taskbot_build_info gauge",
      "# TYPE taskbot_run_duration_seconds histogram",
      "# TYPE taskbot_runs_handed_over_total counter",
      "# TYPE taskbot_slack_queue_depth gauge",
    ]) {
      expect(text).toContain(family);
    }
    // No ids as labels: a channel, user or thread would make a series per conversation.
    expect(text).not.toMatch(/(channel|user|thread|team)=/);
  });

  it("counts a task's service requests once it has run", async () => {
    const before = await (await fetch(`${base}/metrics`)).text();
    await h.command("Build a tiny page");
    const threadTs = await h.waitForTaskThread("Build a tiny page");
    await h.waitForFinal(threadTs, 1, 20_000);
    const after = await (await fetch(`${base}/metrics`)).text();
    const created = '{endpoint="create",status="200"}';
    expect(sample(after, "taskbot_service_requests_total", created)).toBe(
      sample(before, "taskbot_service_requests_total", created) + 1,
    );
    expect(
      sample(after, "taskbot_service_request_duration_seconds_count", '{endpoint="create"}'),
    ).toBeGreaterThan(0);
    expect(sample(after, "process_resident_memory_bytes")).toBeGreaterThan(0);
    const ended = '{state="completed"}';
    expect(sample(after, "taskbot_runs_ended_total", ended)).toBe(
      sample(before, "taskbot_runs_ended_total", ended) + 1,
    );
    // Timed from the /task to its final message: more than nothing, less than the test.
    const took =
      sample(after, "taskbot_run_duration_seconds_sum", ended) -
      sample(before, "taskbot_run_duration_seconds_sum", ended);
    expect(sample(after, "taskbot_run_duration_seconds_count", ended)).toBe(
      sample(before, "taskbot_run_duration_seconds_count", ended) + 1,
    );
    expect(took).toBeGreaterThan(0);
    expect(took).toBeLessThan(20);
    // The scheduler's queue, by method, drained once the run is over.
    expect(sample(after, "taskbot_slack_queue_depth", '{method="chat.update"}')).toBe(0);
    const posts = '{method="chat.postMessage",outcome="ok"}';
    expect(sample(after, "taskbot_slack_calls_total", posts)).toBeGreaterThanOrEqual(
      sample(before, "taskbot_slack_calls_total", posts) + 2,
    );
    expect(sample(after, "taskbot_chunk_to_slack_lag_seconds_count")).toBeGreaterThan(0);
    // The JSON view stays for tools that read it.
    const json = (await (await fetch(`${base}/metrics.json`)).json()) as { relay: unknown };
    expect(json.relay).toBeDefined();
  }, 30_000);
});

describe("health and metrics on an internal port (ADMIN_PORT)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ env: { ADMIN_PORT: "0" } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("serves them on the admin port only, and Slack's endpoint still answers Slack", async () => {
    const admin = h.app.slack.adminPort();
    expect(admin).toBeGreaterThan(0);
    // Only this machine reaches it unless the operator names an interface (ADMIN_HOST).
    expect(h.app.slack.adminHost()).toBe("127.0.0.1");
    const inside = `http://127.0.0.1:${admin}`;
    const outside = `http://127.0.0.1:${h.app.port}`;
    expect((await fetch(`${inside}/healthz`)).status).toBe(200);
    expect((await fetch(`${inside}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${inside}/metrics`)).text()).toContain(
      "# TYPE taskbot_runs_active gauge",
    );
    expect((await fetch(`${inside}/slack/events`, { method: "POST" })).status).toBe(404);
    for (const path of ["/healthz", "/readyz", "/metrics", "/metrics.json"]) {
      expect((await fetch(`${outside}${path}`)).status).toBe(404);
    }
    await h.command("Write a limerick [sim:length=100]");
    const threadTs = await h.waitForTaskThread("Write a limerick");
    await h.waitForFinal(threadTs);
  });

  it("says not ready, yet alive, while the app stops, and closes the port last", async () => {
    const inside = `http://127.0.0.1:${h.app.slack.adminPort()}`;
    // A task whose creation the service holds for 2 s: shutting down waits for it.
    h.sim.injectFault({ endpoint: "create", delayMs: 2000 });
    const creates = h.sim.requests.filter((r) => r.method === "POST").length;
    await h.command("Held at creation [sim:length=50]");
    await until("the held creation", () => {
      return h.sim.requests.filter((r) => r.method === "POST").length > creates;
    });
    const closing = h.app.close();
    const [ready, alive] = await Promise.all([
      fetch(`${inside}/readyz`).then(async (r) => ({ status: r.status, body: await r.json() })),
      fetch(`${inside}/healthz`).then((r) => r.status),
    ]);
    expect(ready).toEqual({
      status: 503,
      body: { ok: false, running: false, slack: true, store: true },
    });
    expect(alive).toBe(200);
    await closing;
    await expect(fetch(`${inside}/healthz`)).rejects.toThrow();
    await h.startApp(); // for afterAll
  });
});
