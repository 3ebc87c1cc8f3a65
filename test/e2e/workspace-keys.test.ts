/**
 * Each workspace's own Task service API key, through the local Slack: a workspace admin opens
 * Workspace settings from App Home (or the button `/task settings` offers admins), pastes a key;
 * the app checks it with the service first. A refused key is not saved and the modal says why;
 * an accepted one is stored sealed (the raw record never holds it), the admin is told its last
 * four characters privately, and the workspace's next task is sent with it (the simulator
 * records which key each call used). Nobody else may open or submit the settings, a key that can
 * no longer be opened asks the admin to set it again, and no key ever reaches the logs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { createServiceKeyStore } from "../../src/store/service-keys.ts";
import { sealingKeys } from "../../src/util/secret-box.ts";
import { rawKeys } from "../support/raw-keys.ts";
import { sendAppHomeOpened, sendViewAction } from "../../tools/local-slack/home-requests.ts";
import type { OpenedView } from "../../tools/local-slack/index.ts";
import {
  sendBlockAction,
  sendViewSubmission,
  viewState,
  type SlackHttpResponse,
} from "../../tools/local-slack/slack-requests.ts";
import {
  ADMIN,
  API_KEY,
  CHANNEL,
  Harness,
  OTHER,
  SIGNING_SECRET,
  TEAM,
} from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

/** The workspace's own key, from its account on the service (the simulator accepts it). */
const WORKSPACE_KEY = "he-acmeWorkspaceOwnKey-7f3a";
/** A key the service never issued. */
const REFUSED_KEY = "he-typoInTheKeyPasted-0000";
const RECORD = `t:${TEAM}:service-key`;

type Values = Record<string, Record<string, Record<string, unknown>>>;
const keyField = (value: string): Values => ({
  service_key: { value: { type: "plain_text_input", value } },
});
const removeTicked: Values = {
  service_key: { value: { type: "plain_text_input", value: null } },
  service_key_remove: {
    value: { type: "checkboxes", selected_options: [{ value: "remove" }] },
  },
};

describe.each(storeBackends())("each workspace's service key with %s", (_name, redis) => {
  let h: Harness;
  const encryptionKey = randomBytes(32).toString("base64");
  beforeAll(async () => {
    h = await Harness.start({
      redisUrl: redis,
      env: { ENCRYPTION_KEY: encryptionKey },
      simulator: { apiKeys: [API_KEY, WORKSPACE_KEY] },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function openHome(user: string): Promise<OpenedView> {
    const before = h.slack.homeTabs(user).length;
    await sendAppHomeOpened(h.eventsUrl, SIGNING_SECRET, { team_id: TEAM, user_id: user });
    return h.slack.waitFor(() => h.slack.homeTabs(user)[before], {
      description: `the Home tab of ${user}`,
    });
  }

  async function opened(from: number): Promise<OpenedView> {
    const view = await h.slack.waitFor(() => h.slack.views()[from], {
      description: "a view opened with views.open",
    });
    expect(h.slack.validationErrors).toEqual([]);
    return view;
  }

  /** `user` presses Workspace settings in (someone's) Home tab; resolves with what opened. */
  async function pressWorkspaceSettings(home: OpenedView, user: string): Promise<OpenedView> {
    const before = h.slack.views().length;
    const res = await sendViewAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      view: home.view,
      action_id: "open_workspace_settings",
      value: "",
      block_id: "home_admin",
    });
    expect(res.status).toBe(200);
    return opened(before);
  }

  const submit = (modal: OpenedView, user: string, values: Values): Promise<SlackHttpResponse> =>
    sendViewSubmission(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: user,
      view: modal.view,
      // Slack sends every input of the modal; the test says what the admin changed.
      values: { ...viewState(modal.view), ...values },
    });

  const fieldError = (res: SlackHttpResponse) =>
    (res.json as { errors?: Record<string, string> } | undefined)?.errors?.service_key;

  /** Runs a task and returns the index (in the simulator's keys) of the key its create used. */
  async function taskKey(prompt: string): Promise<number | undefined> {
    await h.command(prompt);
    const threadTs = await h.waitForTaskThread(prompt);
    await h.waitForFinal(threadTs);
    const create = h.sim.requests.findLast(
      (r) => r.path.endsWith("/quick-action") && r.status === 200,
    );
    return create?.keyIndex;
  }

  const showsButton = (home: OpenedView) =>
    JSON.stringify(home.view.blocks).includes('"action_id":"open_workspace_settings"');

  it("lets an admin set the workspace's key from App Home: checked, refused keys not saved, then sealed and used", async () => {
    // Tasks use the app's key until then.
    expect(await taskKey("Outline the onboarding guide")).toBe(0);
    const home = await openHome(ADMIN);
    expect(showsButton(home)).toBe(true);
    const modal = await pressWorkspaceSettings(home, ADMIN);
    expect(modal.view.callback_id).toBe("workspace_settings");
    expect(JSON.stringify(modal.view.blocks)).toContain(
      "No key set; tasks use the app's default key.",
    );

    // A key the service refuses: the modal says why, nothing is saved.
    const refused = await submit(modal, ADMIN, keyField(REFUSED_KEY));
    expect(refused.json).toMatchObject({ response_action: "errors" });
    expect(fieldError(refused)).toContain("The service refused this key (401)");
    expect(await h.app.store.getRecord(RECORD)).toBeUndefined();

    // An accepted one: saved sealed, the modal closes, the admin is told privately.
    const saved = await submit(modal, ADMIN, keyField(`  ${WORKSPACE_KEY} `));
    expect(saved.status).toBe(200);
    expect(saved.body).toBe("");
    const record = JSON.stringify(await h.app.store.getRecord(RECORD));
    expect(record).toContain("…7f3a");
    expect(record).not.toContain(WORKSPACE_KEY);
    expect(record).not.toContain("acmeWorkspaceOwnKey");
    const confirmation = await h.slack.waitFor(
      () => h.slack.messages(`D${ADMIN.slice(1)}`).find((m) => m.text.includes("…7f3a")),
      { description: "the admin's private confirmation" },
    );
    expect(confirmation.text).toContain(
      "The workspace's Task service API key ending in …7f3a is saved",
    );

    // The workspace's next task is sent with its own key.
    expect(await taskKey("Draft the release notes")).toBe(1);
    const run = h.sim.runs().find((r) => r.prompt === "Draft the release notes");
    expect(run?.status).toBe("completed");

    // Opened again, the modal names the key by its last four characters only.
    const again = await pressWorkspaceSettings(await openHome(ADMIN), ADMIN);
    const shown = JSON.stringify(again.view);
    expect(shown).toContain(`A key ending in …7f3a is set (by <@${ADMIN}>`);
    expect(shown).not.toContain(WORKSPACE_KEY);

    // Removing it: tasks use the app's key again.
    expect((await submit(again, ADMIN, removeTicked)).body).toBe("");
    expect(await h.app.store.getRecord(RECORD)).toBeUndefined();
    expect(await taskKey("List the open questions")).toBe(0);

    // Both are audit events, naming the key by its last four characters only.
    const audit = h.logLines
      .map((l) => (JSON.parse(l) as { audit?: Record<string, unknown> }).audit)
      .filter((a) => a?.what === "service_key.set" || a?.what === "service_key.removed");
    expect(audit).toEqual([
      expect.objectContaining({ what: "service_key.set", who: ADMIN, workspace: TEAM }),
      expect.objectContaining({ what: "service_key.removed", who: ADMIN, workspace: TEAM }),
    ]);
    expect(audit[0]?.detail).toBe("key ending in …7f3a");

    // No key, refused or accepted, ever reached the logs or a Slack message.
    const logs = h.logLines.join("");
    expect(logs).toContain("a workspace's service key was set");
    for (const secret of [WORKSPACE_KEY, REFUSED_KEY]) {
      expect(logs).not.toContain(secret);
      expect(JSON.stringify(h.slack.messages(`D${ADMIN.slice(1)}`))).not.toContain(secret);
      expect(JSON.stringify(h.slack.views())).not.toContain(secret);
    }
  });

  it("refuses anyone but a workspace admin or owner, even with a forged button or form", async () => {
    const home = await openHome(OTHER);
    expect(showsButton(home)).toBe(false);
    // A forged press of the button: a notice, not the settings.
    const notice = await pressWorkspaceSettings(home, OTHER);
    expect(notice.view.callback_id).not.toBe("workspace_settings");
    expect(JSON.stringify(notice.view.blocks)).toContain(
      "Only workspace admins and owners can change the app's workspace settings.",
    );
    // A forged submission of the admin's form: refused, nothing saved, nothing asked of the service.
    const adminModal = await pressWorkspaceSettings(await openHome(ADMIN), ADMIN);
    const checks = h.sim.requests.filter((r) => r.path.includes("key-check")).length;
    const res = await submit(adminModal, OTHER, keyField(WORKSPACE_KEY));
    expect(fieldError(res)).toBe(
      "Only workspace admins and owners can change the app's workspace settings.",
    );
    expect(await h.app.store.getRecord(RECORD)).toBeUndefined();
    expect(h.sim.requests.filter((r) => r.path.includes("key-check")).length).toBe(checks);
  });

  it("offers admins the Workspace settings button with /task settings, and it opens the modal", async () => {
    await h.command("settings", { user: OTHER });
    await h.command("settings", { user: ADMIN });
    const offer = await h.slack.waitFor(
      () =>
        h.slack.responseUrlPosts.find((p) =>
          JSON.stringify(p.body).includes("open_workspace_settings"),
        ),
      { description: "the Workspace settings button for the admin" },
    );
    // Only one such offer: the admin's.
    const offers = h.slack.responseUrlPosts.filter((p) =>
      JSON.stringify(p.body).includes("open_workspace_settings"),
    );
    expect(offers).toHaveLength(1);
    expect(JSON.stringify(offer.body)).toContain("Workspace settings");
    const before = h.slack.views().length;
    const res = await sendBlockAction(h.eventsUrl, SIGNING_SECRET, {
      team_id: TEAM,
      user_id: ADMIN,
      channel_id: CHANNEL,
      message_ts: "1700000000.000100",
      action_id: "open_workspace_settings",
      value: "",
      block_id: "workspace_settings",
    });
    expect(res.status).toBe(200);
    // The channel's defaults form opened first (views[before - 1]); now the settings.
    const modal = await opened(before);
    expect(modal.view.callback_id).toBe("workspace_settings");
  });

  it("asks an admin to set the key again when it was sealed with an encryption key no longer listed", async () => {
    // Sealed with an encryption key the app is no longer given.
    const dropped = createServiceKeyStore(
      h.app.store,
      sealingKeys([randomBytes(32).toString("base64")]),
    );
    await dropped.set(TEAM, WORKSPACE_KEY, ADMIN);
    const creates = h.sim.requests.filter((r) => r.path.endsWith("/quick-action")).length;
    await h.command("Summarise the incident");
    const threadTs = await h.waitForTaskThread("Summarise the incident");
    const [answer] = await h.waitForFinal(threadTs);
    expect(JSON.stringify(answer?.blocks)).toContain("A workspace admin needs to set it again");
    // Not sent with the app's key instead.
    expect(h.sim.requests.filter((r) => r.path.endsWith("/quick-action")).length).toBe(creates);
    const modal = await pressWorkspaceSettings(await openHome(ADMIN), ADMIN);
    expect(JSON.stringify(modal.view.blocks)).toContain("ending in …7f3a can no longer be read");
    await h.app.store.deleteRecord(RECORD);
  });

  it("keeps no Slack token at rest with one workspace, and its service key only sealed", async () => {
    await createServiceKeyStore(h.app.store, sealingKeys([encryptionKey])).set(
      TEAM,
      WORKSPACE_KEY,
      ADMIN,
    );
    const raw = await rawKeys({ namespace: h.namespace, dataDir: h.dataDir, redisUrl: redis });
    const stored = [...raw].map(([k, v]) => `${k} ${v}`).join("\n");
    expect(stored).toContain(RECORD); // sealed, with only its last four characters readable
    // The bot token is read from SLACK_BOT_TOKEN, never written down.
    expect(stored).not.toContain(h.slack.botToken);
    expect(stored).not.toMatch(/xox[bpe][.-]/);
    expect(stored).not.toContain(WORKSPACE_KEY);
    await h.app.store.deleteRecord(RECORD);
  });
});
