/**
 * The App Home view and the defaults texts: within Slack's view limits whatever the prompts, links
 * to the threads, and the sentence naming the default a refusal came from.
 */
import { describe, expect, it } from "vitest";
import { TaskServiceError } from "../../src/service/errors.ts";
import type { RecentTask } from "../../src/store/types.ts";
import { blameDefaults, renderDefaultsModal } from "../../src/view/defaults.ts";
import { renderHome, threadLink } from "../../src/view/home.ts";
import { validateView } from "../../tools/local-slack/index.ts";

const task = (i: number, prompt: string): RecentTask => ({
  channelId: "C1",
  threadTs: `1700000000.${String(i).padStart(6, "0")}`,
  prompt,
  status: "failed",
  startedAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_000,
});

describe("the App Home view", () => {
  it("stays within Slack's limits with 20 long prompts, and pings nobody", () => {
    const nasty = "<!channel> @here <@U1> | *bold* > quote & more ".repeat(4).slice(0, 150);
    const view = renderHome({
      tasks: Array.from({ length: 20 }, (_, i) => task(i, nasty)),
      defaults: { model: "x".repeat(150), agent: "a`b", effort: "high", thinking: false },
      teamUrl: "https://acme.slack.com/",
    });
    expect(validateView(view)).toBeUndefined();
    const text = JSON.stringify(view);
    expect(text).not.toContain("<!channel>");
    expect(text).not.toContain("<@U1>");
  });

  it("links to a thread by its permalink, or to the channel without the workspace URL", () => {
    expect(threadLink("https://acme.slack.com/", "C1", "1700000000.000100")).toBe(
      "https://acme.slack.com/archives/C1/p1700000000000100",
    );
    expect(threadLink(undefined, "C1", "1700000000.000100")).toBe(
      "https://slack.com/app_redirect?channel=C1",
    );
  });

  it("builds valid defaults forms, with menus when names are configured", () => {
    const choices = { models: ["m1", "m2"], agents: [] };
    const personal = renderDefaultsModal({
      scope: { kind: "user" },
      current: { model: "retired", effort: "low" },
      choices,
    });
    expect(validateView(personal)).toBeUndefined();
    // A saved name no longer configured is still offered, selected.
    expect(JSON.stringify(personal)).toContain(
      '"initial_option":{"text":{"type":"plain_text","text":"retired"',
    );
    const channel = renderDefaultsModal({
      scope: { kind: "channel", channelId: "C1" },
      current: {},
      choices,
    });
    expect(validateView(channel)).toBeUndefined();
    expect(channel.private_metadata).toBe("C1");
  });
});

describe("blaming a default for a refusal", () => {
  const used = [
    { key: "model", value: "old-model", from: "personal" as const },
    { key: "effort", value: "high", from: "channel" as const },
  ];
  const refused = (detail: string) =>
    new TaskServiceError({ kind: "validation", message: "422", status: 422, detail });

  it("names the default the refusal mentions", () => {
    expect(blameDefaults(refused("Unknown model_name 'old-model'"), used)).toBe(
      "It was caused by your default model `old-model` (change it with your defaults in the app's Home tab, or override it with an inline option).",
    );
  });

  it("names every default used when the refusal names none, and nothing for other failures", () => {
    expect(blameDefaults(refused("Invalid request"), used)).toContain(
      "It may come from your default model `old-model` and this channel's default effort `high`",
    );
    expect(blameDefaults(refused("bad"), [])).toBeUndefined();
    expect(
      blameDefaults(new TaskServiceError({ kind: "server", message: "500", status: 500 }), used),
    ).toBeUndefined();
  });
});
