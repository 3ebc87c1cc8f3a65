/**
 * Ending Workflow Builder steps against the local Slack (a real WebClient; the double checks
 * the execution's token, takes one end per execution and checks the outputs against the
 * manifest's): once however often asked, with the execution's token even when it is kept
 * sealed, and outputs cut to what a step carries.
 */
import { readFileSync } from "node:fs";
import { WebClient } from "@slack/web-api";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { RUN_TASK, slackWorkflowSteps, stepKeeper } from "../../src/slack/workflow-steps.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import { sealingKeys } from "../../src/util/secret-box.ts";
import {
  type FunctionDefinition,
  type LocalSlack,
  startLocalSlack,
} from "../../tools/local-slack/index.ts";
import { silentLogger } from "../support/silent-logger.ts";

const { functions } = parse(
  readFileSync(new URL("../../manifest.yml", import.meta.url), "utf8"),
) as {
  functions: Record<string, FunctionDefinition>;
};
const KEYS = sealingKeys([Buffer.alloc(32, 7).toString("base64")]);
const thread = { teamId: "T0001", channelId: "C0GENERAL", threadTs: "1700000000.000100" };

let slack: LocalSlack;
let client: WebClient;
beforeEach(async () => {
  slack = await startLocalSlack({ teamId: "T0001", functions });
  client = new WebClient(undefined, {
    slackApiUrl: slack.apiUrl,
    logger: silentLogger,
    retryConfig: { retries: 0 },
  });
});
afterEach(() => slack.close());

function steps(keys = KEYS) {
  return slackWorkflowSteps({
    client,
    store: createMemoryStore(),
    teamUrl: async () => slack.teamUrl,
    keys,
    claimTtlMs: 60_000,
    logger: pino({ level: "silent" }),
  });
}

const ends = () => slack.calls.filter((c) => c.method.startsWith("functions.complete"));

describe("ending a Run a task step", () => {
  it("ends it once, with its own token kept sealed, however often and wherever asked", async () => {
    const { id, token } = await slack.executeFunction({ callbackId: RUN_TASK }, undefined);
    const step = stepKeeper(KEYS).keep(id, token);
    expect(step.token).not.toContain(token);
    const ender = steps();
    const result = { state: "completed", answer: "Done.", files: ["a.md"], thread } as const;
    await Promise.all([ender.end("T0001", step, result), ender.end("T0001", step, result)]);
    await ender.end("T0001", step, result);
    expect(ends().map((c) => [c.method, c.token, c.response.ok])).toEqual([
      ["functions.completeSuccess", token, true],
    ]);
    expect(slack.execution(id)?.outputs).toEqual({
      status: "completed",
      thread_link: `${slack.teamUrl}archives/C0GENERAL/p1700000000000100`,
      answer: "Done.",
      files: "a.md",
    });
  });

  it("cuts an answer to the 4,000 bytes a step carries, never inside a character, saying where the rest is", async () => {
    const { id, token } = await slack.executeFunction({ callbackId: RUN_TASK }, undefined);
    const answer = "日本語のテキスト🎉".repeat(400); // far past 4,000 UTF-8 bytes
    const result = { state: "completed", answer, files: [], thread } as const;
    await steps([]).end("T0001", stepKeeper([]).keep(id, token), result);
    // The double refuses a string output past 4,000 bytes: the end went through.
    expect(ends().map((c) => c.response.ok)).toEqual([true]);
    const cut = String(slack.execution(id)?.outputs?.answer);
    expect(Buffer.byteLength(cut, "utf8")).toBeLessThanOrEqual(4000);
    expect(answer.startsWith(cut.slice(0, cut.indexOf("\n\n[…]")))).toBe(true);
    expect(cut).not.toContain("\uFFFD");
    expect(cut).toMatch(/The whole answer is in its thread: https:\/\//);
  });

  it("fails it with the reason its thread shows, and the thread's link", async () => {
    const { id, token } = await slack.executeFunction({ callbackId: RUN_TASK }, undefined);
    const result = {
      state: "stopped",
      answer: "Half",
      reason: "it reached the maximum run time of 1h 00m",
      files: [],
      thread,
    } as const;
    await steps().end("T0001", stepKeeper(KEYS).keep(id, token), result);
    expect(slack.execution(id)).toMatchObject({
      status: "failed",
      error: `The task was stopped: it reached the maximum run time of 1h 00m (thread: ${slack.teamUrl}archives/C0GENERAL/p1700000000000100)`,
    });
  });

  it("leaves a step alone whose token does not open (never sending what it holds)", async () => {
    const { id, token } = await slack.executeFunction({ callbackId: RUN_TASK }, undefined);
    const other = sealingKeys([Buffer.alloc(32, 9).toString("base64")]);
    const result = { state: "error", answer: "", reason: "no", files: [] } as const;
    await steps().end("T0001", stepKeeper(other).keep(id, token), result);
    expect(ends()).toEqual([]);
    expect(slack.execution(id)?.status).toBe("running");
  });
});
