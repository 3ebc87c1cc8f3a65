/**
 * The App Home view and the defaults texts: within Slack's view limits whatever the prompts, links
 * to the threads, and the sentence naming the default a refusal came from. What the app keeps of
 * a person and for how long, the admins' audit trail, and the erase forms.
 */
import { describe, expect, it } from "vitest";
import { TaskServiceError } from "../../src/service/errors.ts";
import type { RecentTask } from "../../src/store/types.ts";
import { blameDefaults, renderDefaultsModal } from "../../src/view/defaults.ts";
import type { AuditEvent } from "../../src/store/audit.ts";
import {
  AUDIT_SHOWN,
  auditLine,
  erasedMineText,
  eraseMineModal,
  eraseWorkspaceModal,
  renderHome,
  threadLink,
} from "../../src/view/home.ts";
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

  it("tells a person what is kept and how long, and admins the audit trail, within Slack's limits", () => {
    const at = Date.UTC(2026, 0, 15, 9, 30);
    const audit: AuditEvent[] = Array.from({ length: 100 }, (_, i) => ({
      what: "channel_defaults.changed",
      who: "U0ADMIN",
      when: at - i * 60_000,
      workspace: "T1",
      channel: "C1",
      detail: `model *m${i}* <!channel> & more`,
    }));
    const view = renderHome({
      tasks: Array.from({ length: 20 }, (_, i) => task(i, `Task ${i}`)),
      defaults: {},
      admin: { alert: { status: 402, at }, audit },
      retentionDays: 30,
    });
    expect(validateView(view)).toBeUndefined();
    const text = JSON.stringify(view);
    expect(text).toContain("for 30 days after they last changed");
    expect(text).toContain('"action_id":"home_erase_mine"');
    expect(text).toContain('"action_id":"home_erase_workspace"');
    expect(text).toContain("the latest admin actions of the last 30 days");
    expect(text.match(/changed the defaults of <#C1>/g)).toHaveLength(AUDIT_SHOWN);
    expect(text).not.toContain("<!channel>");
    // A person who is no admin sees neither the trail nor the workspace's erase.
    const member = JSON.stringify(renderHome({ tasks: [], defaults: {}, admin: undefined }));
    expect(member).toContain("for 90 days after they last changed");
    expect(member).not.toContain("Audit trail");
    expect(member).not.toContain("home_erase_workspace");
  });

  it("says who did what in each audit event, a key by its last four characters only", () => {
    const when = Date.UTC(2026, 0, 15, 9, 30);
    const base = { who: "U0ADMIN", when, workspace: "T1" };
    expect(auditLine({ ...base, what: "service_key.set", detail: "key ending in …1234" })).toBe(
      "<!date^1768469400^{date_short_pretty} {time}|2026-01-15 09:30 UTC> · <@U0ADMIN> set the workspace's service key (key ending in …1234)",
    );
    expect(
      auditLine({ ...base, what: "run.stopped", channel: "C1", whom: "U0OWNER", detail: "run r1" }),
    ).toContain("<@U0ADMIN> stopped a run of <@U0OWNER> in <#C1> (run r1)");
    expect(auditLine({ ...base, who: "slack", what: "app.uninstalled" })).toContain(
      "· slack uninstalled the app",
    );
  });

  it("builds valid erase forms that say what is erased and what is not", () => {
    for (const modal of [eraseMineModal(), eraseWorkspaceModal()]) {
      expect(validateView(modal)).toBeUndefined();
      expect(JSON.stringify(modal)).toContain("the task service's own copy");
    }
    expect(JSON.stringify(eraseWorkspaceModal())).toContain("audit trail (this erase is written");
    expect(
      erasedMineText({ threads: 2, queuedReplies: 1, recentTasks: 2, defaults: true, votes: 0 }),
    ).toMatch(
      /^Your records are erased: 2 task records, 1 waiting reply, 2 recent tasks, 0 votes, your defaults\./,
    );
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
