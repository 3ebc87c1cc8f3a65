/**
 * The usage policy form as an admin sees it: valid for Slack with the current policy filled
 * in, read back into the same policy, and what to fix for choices that say nothing; App Home's
 * admin part with the service's 402 or 429.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_USAGE_POLICY, type UsagePolicy } from "../../src/store/usage-policy.ts";
import { renderHome } from "../../src/view/home.ts";
import {
  readUsagePolicy,
  serviceAlertText,
  USAGE_FIELD,
  usagePolicyBlocks,
  type UserGroupOption,
  type ViewStateValues,
} from "../../src/view/usage-policy.ts";
import {
  appKeySection,
  OPEN_WORKSPACE_SETTINGS,
  workspaceSettingsModal,
} from "../../src/view/workspace-settings.ts";
import { validateView } from "../../tools/local-slack/index.ts";

const groups = [
  { id: "S0ENG", handle: "engineering", name: "Engineers" },
  { id: "S0OPS", handle: "ops", name: "ops" },
];
const strict: UsagePolicy = {
  who: { kind: "groups", groupIds: ["S0ENG"] },
  where: { kind: "channels", channelIds: ["C0TASKS"] },
  perUserPerHour: 5,
  joinPublicChannels: true,
};

/** What Slack submits for the form's fields. */
function submitted(f: {
  who: string;
  groups?: string[];
  where: string;
  channels?: string[];
  quota?: string;
  join?: string;
}): ViewStateValues {
  return {
    [USAGE_FIELD.who]: { value: { selected_option: { value: f.who } } },
    [USAGE_FIELD.groups]: {
      value: { selected_options: (f.groups ?? []).map((value) => ({ value })) },
    },
    [USAGE_FIELD.where]: { value: { selected_option: { value: f.where } } },
    [USAGE_FIELD.channels]: { value: { selected_conversations: f.channels ?? [] } },
    [USAGE_FIELD.quota]: { value: { value: f.quota ?? "0" } },
    [USAGE_FIELD.join]: { value: { selected_option: { value: f.join ?? "invite" } } },
  };
}

/** The Workspace settings modal as admins see it without sealed keys: the policy after the key. */
const settingsModal = (policy: UsagePolicy, offered: readonly UserGroupOption[]) =>
  workspaceSettingsModal({
    keySection: appKeySection(),
    extraSections: usagePolicyBlocks(policy, offered),
  });

type Block = { type: string; block_id?: string; element?: Record<string, unknown> };
const field = (blocks: Block[], id: string) => blocks.find((b) => b.block_id === id)?.element;

describe("the usage policy form", () => {
  it("shows the current policy, within Slack's limits", () => {
    const view = settingsModal(strict, groups);
    expect(validateView(view)).toBeUndefined();
    const blocks = view.blocks as Block[];
    expect(field(blocks, USAGE_FIELD.who)?.initial_option).toMatchObject({ value: "groups" });
    expect(field(blocks, USAGE_FIELD.groups)?.initial_options).toEqual([
      {
        value: "S0ENG",
        text: { type: "plain_text", text: "@engineering (Engineers)", emoji: true },
      },
    ]);
    expect(field(blocks, USAGE_FIELD.where)?.initial_option).toMatchObject({ value: "channels" });
    expect(field(blocks, USAGE_FIELD.channels)).toMatchObject({
      type: "multi_conversations_select",
      initial_conversations: ["C0TASKS"],
    });
    expect(field(blocks, USAGE_FIELD.quota)).toMatchObject({
      type: "number_input",
      initial_value: "5",
    });
    expect(field(blocks, USAGE_FIELD.join)?.initial_option).toMatchObject({ value: "join" });
    // Off by default: the app goes where it is invited.
    const off = settingsModal(DEFAULT_USAGE_POLICY, groups).blocks as Block[];
    expect(field(off, USAGE_FIELD.join)?.initial_option).toMatchObject({ value: "invite" });
    expect(DEFAULT_USAGE_POLICY.joinPublicChannels).toBe(false);
  });

  it("keeps a chosen group that Slack no longer lists, and says so when there are none", () => {
    const gone = usagePolicyBlocks(strict, []) as Block[];
    expect(field(gone, USAGE_FIELD.groups)?.options).toEqual([
      expect.objectContaining({ value: "S0ENG" }),
    ]);
    const none = settingsModal(DEFAULT_USAGE_POLICY, []);
    expect(validateView(none)).toBeUndefined();
    expect(JSON.stringify(none)).toContain("This workspace has no user groups I can see");
    // The section alone (for the Workspace settings modal) starts with its own header.
    expect(usagePolicyBlocks(DEFAULT_USAGE_POLICY, groups)[0]).toMatchObject({ type: "header" });
  });

  it("reads a submission back into the policy it shows", () => {
    expect(
      readUsagePolicy(
        submitted({
          who: "groups",
          groups: ["S0ENG", "S0OPS"],
          where: "channels",
          channels: ["C0TASKS", "G0SECRET"],
          quota: "12",
          join: "join",
        }),
      ),
    ).toEqual({
      policy: {
        who: { kind: "groups", groupIds: ["S0ENG", "S0OPS"] },
        where: { kind: "channels", channelIds: ["C0TASKS", "G0SECRET"] },
        perUserPerHour: 12,
        joinPublicChannels: true,
      },
    });
    // Groups and channels picked but not used are not kept.
    expect(
      readUsagePolicy(
        submitted({ who: "everyone", groups: ["S0ENG"], where: "all", channels: ["C0X"] }),
      ),
    ).toEqual({ policy: DEFAULT_USAGE_POLICY });
  });

  it("says what to fix: no group, no channel, a quota that is not a whole number", () => {
    expect(readUsagePolicy(submitted({ who: "groups", where: "channels", quota: "2.5" }))).toEqual({
      errors: {
        [USAGE_FIELD.groups]: "Pick at least one user group, or let everyone start tasks.",
        [USAGE_FIELD.channels]: "Pick at least one channel, or allow every channel.",
        [USAGE_FIELD.quota]: "A whole number from 0 (no quota) to 1000.",
      },
    });
    expect(readUsagePolicy(submitted({ who: "everyone", where: "all", quota: "5000" }))).toEqual({
      errors: { [USAGE_FIELD.quota]: "A whole number from 0 (no quota) to 1000." },
    });
    const noGroupsBlock = { ...submitted({ who: "groups", where: "all" }) };
    delete (noGroupsBlock as Record<string, unknown>)[USAGE_FIELD.groups];
    expect(readUsagePolicy(noGroupsBlock)).toEqual({
      errors: { [USAGE_FIELD.who]: "Pick at least one user group, or let everyone start tasks." },
    });
  });
});

describe("App Home for the workspace's admins", () => {
  const at = Date.UTC(2027, 0, 15, 10, 42);

  it("tells them the service said the workspace is out of credits, or rate-limited until when", () => {
    expect(serviceAlertText({ status: 402, at })).toBe(
      `:warning: The Task service said the workspace is out of credits (402) at <!date^${at / 1000}^{date_short_pretty} {time}|2027-01-15 10:42 UTC>. Tasks fail until credits are added to the workspace's service account.`,
    );
    expect(serviceAlertText({ status: 429, at, resetAt: at + 7_000 })).toBe(
      `:hourglass_flowing_sand: The Task service said the workspace is rate-limited (429) at <!date^${at / 1000}^{date_short_pretty} {time}|2027-01-15 10:42 UTC>: resets at <!date^${at / 1000 + 7}^{date_short_pretty} {time}|2027-01-15 10:42 UTC>.`,
    );
  });

  it("shows the Workspace settings button and the alert to admins only", () => {
    const person = renderHome({ tasks: [], defaults: {} });
    expect(JSON.stringify(person)).not.toContain(OPEN_WORKSPACE_SETTINGS);
    const admin = renderHome({ tasks: [], defaults: {}, admin: { alert: { status: 402, at } } });
    expect(validateView(admin)).toBeUndefined();
    expect(JSON.stringify(admin)).toContain(OPEN_WORKSPACE_SETTINGS);
    expect(JSON.stringify(admin)).toContain("out of credits (402)");
    const calm = renderHome({ tasks: [], defaults: {}, admin: {} });
    expect(JSON.stringify(calm)).toContain(OPEN_WORKSPACE_SETTINGS);
    expect(JSON.stringify(calm)).not.toContain("Task service said");
  });
});
