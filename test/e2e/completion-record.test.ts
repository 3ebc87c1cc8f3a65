/**
 * The completion record: a run's final message carries Slack message metadata
 * (`task_completed`, `task_failed` or `task_stopped`, with the service's ids, the status, the
 * duration, the file count and who asked), which the local Slack validates and stores.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SlackMessage } from "../../tools/local-slack/index.ts";
import { CHANNEL, Harness, markdownOf, OWNER, stopButton } from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

const metadataOf = (m: SlackMessage | undefined) =>
  m?.metadata as { event_type: string; event_payload: Record<string, unknown> } | undefined;

describe.each(storeBackends())("the completion record with %s", (_name, redis) => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl: redis });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function ended(prompt: string) {
    await h.command(prompt);
    const text = prompt.replace(/ \[sim:.*$/, "");
    const threadTs = await h.waitForTaskThread(text);
    const replies = await h.waitForFinal(threadTs);
    const run = h.sim.runs().find((r) => r.promptText === text);
    return { threadTs, replies, run };
  }

  it("puts task_completed with the run's ids, duration, files and requester on the final message", async () => {
    const { threadTs, replies, run } = await ended("Build a report [sim:length=300] [sim:files=2]");
    const final = replies.at(-1);
    expect(metadataOf(final)).toEqual({
      event_type: "task_completed",
      event_payload: {
        status: "completed",
        service_project_id: run?.projectId,
        service_thread_id: run?.threadId,
        service_run_id: run?.id,
        duration_ms: expect.any(Number),
        file_count: 2,
        requester_user_id: OWNER,
        channel_id: CHANNEL,
        thread_ts: threadTs,
      },
    });
    // Only the final message carries it; the local Slack found nothing to refuse.
    for (const earlier of replies.slice(0, -1)) expect(metadataOf(earlier)).toBeUndefined();
    expect(h.slack.validationErrors).toEqual([]);
  });

  it("puts task_failed on a run that failed", async () => {
    const { replies } = await ended("Analyse the logs [sim:length=400] [sim:run=fail]");
    expect(metadataOf(replies.at(-1))).toMatchObject({
      event_type: "task_failed",
      event_payload: { status: "failed", file_count: 0, requester_user_id: OWNER },
    });
  });

  it("puts task_stopped on a run stopped with its Stop button", async () => {
    await h.command("Write a long saga [sim:delay=25] [sim:length=20000]");
    const threadTs = await h.waitForTaskThread("Write a long saga");
    const running = await h.slack.waitFor(
      () => h.botReplies(threadTs).find((m) => stopButton(m) && markdownOf(m).length > 40),
      { description: "a streaming message with a Stop button" },
    );
    expect((await h.clickStop(running, OWNER)).status).toBe(200);
    const final = (await h.waitForFinal(threadTs)).at(-1);
    expect(metadataOf(final)).toMatchObject({
      event_type: "task_stopped",
      event_payload: { status: "stopped", requester_user_id: OWNER },
    });
  });
});
