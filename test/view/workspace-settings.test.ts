/**
 * The Workspace settings modal as an admin sees it: valid for Slack in every state of the key,
 * saying which key tasks use (only its last four characters, never pre-filled), with room for
 * more sections; and the Home tab offering it to admins only.
 */
import { describe, expect, it } from "vitest";
import { renderHome } from "../../src/view/home.ts";
import {
  describeKeyStatus,
  keySection,
  type KeyStatus,
  notAllowedModal,
  workspaceSettingsModal,
  workspaceSettingsOffer,
} from "../../src/view/workspace-settings.ts";
import { validateView } from "../../tools/local-slack/index.ts";

const states: KeyStatus[] = [
  { state: "set", lastFour: "…abcd", setBy: "UADMIN", setAt: 1_700_000_000_000 },
  { state: "none", fallback: true },
  { state: "none", fallback: false },
  { state: "unreadable", lastFour: "…9876" },
  { state: "unreadable", lastFour: undefined },
];

describe("the Workspace settings modal", () => {
  it.each(states)("is a valid modal with an empty key field ($state)", (status) => {
    const view = workspaceSettingsModal({ keySection: keySection(status) });
    expect(validateView(view)).toBeUndefined();
    const field = JSON.stringify(view);
    expect(field).toContain('"type":"plain_text_input"');
    expect(field).not.toContain("initial_value");
    // Removing is offered only when there is something to remove.
    expect(field.includes("Remove the workspace's key")).toBe(status.state !== "none");
  });

  it("says which key tasks use, in words an admin acts on", () => {
    expect(describeKeyStatus(states[0] as KeyStatus)).toBe(
      "A key ending in …abcd is set (by <@UADMIN>, <!date^1700000000^{date_short_pretty}|2023-11-14>).",
    );
    expect(describeKeyStatus({ state: "none", fallback: true })).toBe(
      "No key set; tasks use the app's default key.",
    );
    expect(describeKeyStatus({ state: "none", fallback: false })).toBe(
      "No key: tasks cannot start until an admin sets one.",
    );
    expect(describeKeyStatus({ state: "unreadable", lastFour: "…9876" })).toContain(
      "The key ending in …9876 can no longer be read",
    );
  });

  it("takes more sections after the key's", () => {
    const policy = [{ type: "section", text: { type: "mrkdwn", text: "*Who may start tasks*" } }];
    const view = workspaceSettingsModal({
      keySection: keySection({ state: "none", fallback: true }),
      extraSections: policy,
    });
    expect(validateView(view)).toBeUndefined();
    const blocks = view.blocks as Array<{ type: string }>;
    expect(blocks.at(-2)?.type).toBe("divider");
    expect(blocks.at(-1)).toEqual(policy[0]);
  });

  it("tells someone else that only admins may, and offers the button in /task settings", () => {
    expect(validateView(notAllowedModal())).toBeUndefined();
    expect(JSON.stringify(workspaceSettingsOffer())).toContain(
      '"action_id":"open_workspace_settings"',
    );
  });

  it("puts the Workspace settings button in the admin part of the Home tab, admins only", () => {
    const home = (admin?: Record<string, never>) =>
      JSON.stringify(renderHome({ tasks: [], defaults: {}, admin }));
    expect(home({})).toContain('"action_id":"open_workspace_settings"');
    // Someone else has no admin part at all.
    expect(home(undefined)).not.toContain("open_workspace_settings");
    const view = renderHome({ tasks: [], defaults: {}, admin: {} });
    expect(validateView(view)).toBeUndefined();
  });
});
