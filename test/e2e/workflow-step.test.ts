/**
 * The Workflow Builder step "Run a task": the local Slack runs the app's step as a workflow
 * does (`function_executed`, a token of the execution's own), the task streams into a new
 * thread of the step's channel like a `/task`, and the step ends when the task ends:
 * `functions.completeSuccess` with the answer, status, thread link and files, or
 * `functions.completeError` with the reason the thread shows. The local Slack accepts one end
 * per execution, with its token only, and outputs that fit the manifest's. Instances killed
 * while the step's task runs (real processes on one store) leave it to the one that resumes it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedCall } from "../../tools/local-slack/index.ts";
import { Cluster } from "../support/cluster.ts";
import {
  CHANNEL,
  comparable,
  Harness,
  markdownOf,
  NO_MESSAGE,
  OWNER,
  SIGNING_SECRET,
  statusOf,
} from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";
import { until } from "../support/until.ts";
import { GUEST_REFUSAL } from "../../src/threads/access/checks.ts";
import { STEP_FORGOTTEN } from "../../src/runs/run.ts";
import { OUTPUTS_REFUSED } from "../../src/slack/workflow-steps.ts";

describe.each(storeBackends())("the Run a task workflow step with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl: redis });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** The execution once the app ended it (or undefined after the wait). */
  const ended = (id: string, timeoutMs = 20_000) =>
    h.slack.waitFor(
      () => {
        const e = h.slack.execution(id);
        return e && e.status !== "running" ? e : undefined;
      },
      { timeoutMs, description: `workflow step ${id} ended` },
    );

  /** The calls that ended workflow steps. */
  const endCalls = (id: string) =>
    h.slack.calls.filter(
      (c) => c.method.startsWith("functions.complete") && c.args.function_execution_id === id,
    );

  it("streams into a new thread of its channel and completes with the answer, status, thread link and files", async () => {
    const id = await h.runStep({
      prompt: "Weekly report from the workflow [sim:length=6000] [sim:files=2]",
      channel: CHANNEL,
      requester: OWNER,
    });
    const threadTs = await h.waitForTaskThread("Weekly report from the workflow");
    const [final] = await h.waitForFinal(threadTs);
    expect(statusOf(final ?? NO_MESSAGE)).toMatch(/Completed in/);
    const execution = await ended(id);
    const run = h.sim.runs().find((r) => r.promptText.startsWith("Weekly report"));
    expect(execution.status).toBe("completed");
    const outputs = execution.outputs ?? {};
    expect(outputs.status).toBe("completed");
    expect(outputs.thread_link).toBe(
      `${h.slack.teamUrl}archives/${CHANNEL}/p${threadTs.replace(".", "")}`,
    );
    // 6,000 characters do not fit a step's 4,000 bytes: the head, and where the rest is.
    const answer = String(outputs.answer);
    expect(Buffer.byteLength(answer, "utf8")).toBeLessThanOrEqual(4000);
    expect(answer).toContain("The answer was cut here");
    expect(answer).toContain(String(outputs.thread_link));
    const head = answer.slice(0, answer.indexOf("\n\n[…]"));
    expect((run?.content ?? "").startsWith(head)).toBe(true);
    expect(String(outputs.files).split("\n").sort()).toEqual(
      (run?.files ?? []).map((f) => f.name).sort(),
    );
    // The thread shows the whole answer as for any task; one end, with the execution's token.
    expect(markdownOf(final ?? NO_MESSAGE).length).toBeGreaterThan(5000);
    const calls = endCalls(id);
    expect(calls.map((c) => [c.method, c.response.ok])).toEqual([
      ["functions.completeSuccess", true],
    ]);
    expect(calls[0]?.token).toBe(h.slack.executions().find((e) => e.id === id)?.token);
    expect(h.slack.validationErrors).toEqual([]);
  });

  it("fails the step with the reason its thread shows when the task fails", async () => {
    const id = await h.runStep({
      prompt: "Summarise the incident [sim:length=400] [sim:run=fail]",
      channel: CHANNEL,
      requester: OWNER,
    });
    const threadTs = await h.waitForTaskThread("Summarise the incident");
    const [final] = await h.waitForFinal(threadTs);
    const status = statusOf(final ?? NO_MESSAGE);
    expect(status).toMatch(/Failed after/);
    const execution = await ended(id);
    expect(execution.status).toBe("failed");
    const reason = status.replace(/^.*Failed after \S+: /, "");
    expect(execution.error).toContain(`The task failed: ${reason}`);
    expect(execution.error).toContain(`p${threadTs.replace(".", "")}`);
    expect(endCalls(id)).toHaveLength(1);
  });

  it("fails the step, saying why, when its task's message is deleted while the task runs", async () => {
    const id = await h.runStep({
      prompt: "Draft the offsite agenda [sim:delay=20] [sim:length=3000]",
      channel: CHANNEL,
      requester: OWNER,
    });
    const threadTs = await h.waitForTaskThread("Draft the offsite agenda");
    const run = await h.slack.waitFor(() =>
      h.sim.runs().find((r) => r.promptText.startsWith("Draft the offsite agenda")),
    );
    await h.slack.deleteMessage(CHANNEL, threadTs, {
      url: h.eventsUrl,
      signingSecret: SIGNING_SECRET,
    });
    expect((await h.sim.waitForRun(run.id, 10_000)).status).toBe("stopped");
    const execution = await ended(id);
    expect(execution.status).toBe("failed");
    expect(execution.error).toContain(`The task was stopped: ${STEP_FORGOTTEN}`);
    expect(endCalls(id)).toHaveLength(1);
  });

  it("ends the step once Slack's rate limit on ending it has passed", async () => {
    h.slack.failNext("functions.completeSuccess", {
      error: "ratelimited",
      retryAfter: 1,
      times: 2,
    });
    const id = await h.runStep({
      prompt: "Count the open tickets [sim:length=200]",
      channel: CHANNEL,
      requester: OWNER,
    });
    const execution = await ended(id, 30_000);
    expect(execution.status).toBe("completed");
    expect(endCalls(id).map((c) => [c.method, c.response.ok])).toEqual([
      ["functions.completeSuccess", false],
      ["functions.completeSuccess", false],
      ["functions.completeSuccess", true],
    ]);
  });

  it("fails the step, saying where the answer is, when Slack refuses its outputs", async () => {
    h.slack.failNext("functions.completeSuccess", { error: "invalid_arguments" });
    const id = await h.runStep({
      prompt: "List the release notes [sim:length=200]",
      channel: CHANNEL,
      requester: OWNER,
    });
    const execution = await ended(id);
    expect(execution.status).toBe("failed");
    expect(execution.error).toContain(OUTPUTS_REFUSED);
    expect(endCalls(id).map((c) => [c.method, c.response.ok])).toEqual([
      ["functions.completeSuccess", false],
      ["functions.completeError", true],
    ]);
  });

  it("answers in the requester's DM with the app when it names no channel", async () => {
    const id = await h.runStep({
      prompt: "Remind me of the plan [sim:length=80]",
      requester: OWNER,
    });
    const execution = await ended(id);
    // conversations.open names the DM; the task's thread is there, as for a /task.
    const dm = `D${OWNER.slice(1)}`;
    const parent = h.slack
      .messages(dm)
      .find((m) => JSON.stringify(m.blocks ?? []).includes("Remind me of the plan"));
    expect(parent).toBeDefined();
    expect(execution.outputs).toMatchObject({
      status: "completed",
      thread_link: `${h.slack.teamUrl}archives/${dm}/p${(parent?.ts ?? "").replace(".", "")}`,
    });
  });

  it("fails the step with what a person would be told, and runs nothing, when its requester may not start tasks", async () => {
    const before = h.sim.runs().length;
    const nobody = await h.runStep({ prompt: "An orphan task", channel: CHANNEL });
    expect((await ended(nobody)).error).toMatch(/needs a Requester/);
    h.slack.addUser({ id: "U0GUEST", name: "guest", is_restricted: true });
    const guest = await h.runStep({
      prompt: "A guest's task",
      channel: CHANNEL,
      requester: "U0GUEST",
    });
    expect((await ended(guest)).error).toBe(GUEST_REFUSAL);
    expect(h.sim.runs()).toHaveLength(before);
  });

  it("acknowledges a step of another callback id and ignores it", async () => {
    await h.settled(); // what earlier tasks still do as they end (a DM's status) is theirs
    const from = h.slack.calls.length;
    const runs = h.sim.runs().length;
    // runStep resolves once the app answered Slack's request with HTTP 200 (it throws otherwise).
    const id = await h.runStep({ prompt: "Not ours", channel: CHANNEL }, "some_other_step");
    await h.settled();
    expect(h.slack.execution(id)?.status).toBe("running");
    // Nothing but the authorization Bolt asks for once (auth.test) when it is the first event.
    const calls = h.slack.calls.slice(from).filter((c) => c.method !== "auth.test");
    expect(calls).toEqual([]);
    expect(h.sim.runs()).toHaveLength(runs);
  });
});

describe.each(storeBackends())(
  "a Run a task step whose instances are killed, with %s",
  (_name, redis) => {
    let c: Cluster;
    beforeAll(async () => {
      // One instance at a time, each killed in turn (an embedded store is one process's).
      c = await Cluster.start({ redisUrl: redis, instances: 1, leaseTtlMs: 3000 });
    }, 60_000);
    afterAll(async () => {
      await c?.close();
    });

    it("is ended once, by the instance that resumes its run, even if that one dies right after ending it", async () => {
      const id = await c.target("i1").runStep({
        prompt: "Nightly digest [sim:delay=25] [sim:length=3000] [sim:files=1]",
        channel: CHANNEL,
        requester: OWNER,
      });
      const threadTs = await c.waitForTaskThread("Nightly digest");
      // i1 dies mid-stream; i2 takes the run over.
      await c.slack.waitFor(() => c.botReplies(threadTs).find((m) => markdownOf(m).length > 400), {
        description: "some streamed text",
      });
      await c.kill("i1", "SIGKILL");
      // i2 dies the moment it ends the step, before Slack even answers (so before the run's
      // record goes): i3 takes the run over, shows its end again, and leaves the step alone.
      const i2 = await c.spawn("i2");
      const killAtEnd = (call: RecordedCall) => {
        if (call.method.startsWith("functions.complete")) i2.process.kill("SIGKILL");
      };
      c.slack.on("call", killAtEnd);
      try {
        await c.slack.waitForCall((call) => call.method.startsWith("functions.complete"), {
          timeoutMs: 30_000,
        });
        await c.kill("i2", "SIGKILL");
      } finally {
        c.slack.off("call", killAtEnd);
      }
      await c.spawn("i3");
      // A log line: no Slack call announces it, so it is polled for.
      const ended = () => c.logs("i3", "the workflow step was ended already").length > 0;
      await until("i3 finding the step ended", ended, 30_000);
      const [final] = await c.waitForFinal(threadTs, 1, 30_000);
      expect(statusOf(final ?? NO_MESSAGE)).toMatch(/Completed in/);
      const run = c.sim.runs().find((r) => r.promptText.startsWith("Nightly digest"));
      expect(comparable(markdownOf(final ?? NO_MESSAGE))).toBe(comparable(run?.content ?? "x"));
      const ends = c.slack.calls.filter((call) => call.method.startsWith("functions.complete"));
      expect(ends.map((call) => call.method)).toEqual(["functions.completeSuccess"]);
      expect(c.slack.execution(id)?.outputs).toMatchObject({ status: "completed" });
      for (const i of ["i2", "i3"]) {
        expect(c.logs(i, "resuming a run").length, `${i} resumed the run`).toBeGreaterThan(0);
      }
    }, 90_000);
  },
);
