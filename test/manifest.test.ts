/**
 * manifest.yml is a valid Slack app manifest (slackapi/manifest-schema v0.5.0, MIT, vendored in
 * test/fixtures so validation works offline and in any clone) and declares exactly what the bot
 * needs.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ValidateFunction } from "ajv";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { DEFAULT_SUGGESTED_PROMPTS } from "../src/config/prompts.ts";
import { BOT_SCOPES } from "../src/slack/oauth/install-flow.ts";
import { RUN_TASK } from "../src/slack/workflow-steps.ts";
import { stepOutputs } from "../src/view/completion.ts";

const VENDOR = new URL("./fixtures/slack-manifest-schema/", import.meta.url);
const MANIFEST = new URL("../manifest.yml", import.meta.url);

/** The public URLs manifest.schema.json `$ref`s (tag v0.5.0); registered locally under exactly these. */
const VERSION_SCHEMAS = {
  "https://raw.githubusercontent.com/slackapi/manifest-schema/v0.5.0/schemas/manifest.schema.1.0.0.json":
    "schemas/manifest.schema.1.0.0.json",
  "https://raw.githubusercontent.com/slackapi/manifest-schema/v0.5.0/schemas/manifest.schema.2.0.0.json":
    "schemas/manifest.schema.2.0.0.json",
};

const EXPECTED_BOT_SCOPES = [
  "app_mentions:read",
  "assistant:write",
  "chat:write",
  "channels:join",
  "commands",
  "channels:history",
  "groups:history",
  // conversations.info: a channel's creator may change its defaults (`/task settings`); and
  // channel_deleted, group_deleted: a deleted channel's records are forgotten.
  "channels:read",
  "groups:read",
  "im:history",
  "mpim:history",
  // Reading the files people attach (url_private_download with the bot token).
  "files:read",
  "files:write",
  // conversations.open: a workflow step without a channel answers in the requester's DM.
  "im:write",
  "reactions:write",
  "users:read",
  // The usage policy: who is in the user groups allowed to start tasks.
  "usergroups:read",
];

function readJson(relative: string): unknown {
  const path = fileURLToPath(new URL(relative, VENDOR));
  return JSON.parse(readFileSync(path, "utf8"));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Walks a path of object keys / array indexes; undefined when any step is missing. */
function at(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof key === "number") {
      if (!Array.isArray(current)) return undefined;
      current = current[key];
    } else {
      if (!isRecord(current)) return undefined;
      current = current[key];
    }
  }
  return current;
}

function buildValidator(): ValidateFunction {
  // strict: false - the vendored schemas use non-standard keywords (e.g. "regex").
  // validateFormats: false - ajv-formats is not installed; the only format used is "uri" on `$schema`.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  for (const [url, file] of Object.entries(VERSION_SCHEMAS)) {
    const schema = readJson(file);
    if (!isRecord(schema)) throw new Error(`${file} is not a JSON schema object`);
    ajv.addSchema(schema, url);
  }
  const entry = readJson("manifest.schema.json");
  if (!isRecord(entry)) throw new Error("manifest.schema.json is not a JSON schema object");
  return ajv.compile(entry);
}

function errorsOf(validate: ValidateFunction): string {
  return JSON.stringify(validate.errors ?? [], null, 2);
}

const manifest: unknown = parse(readFileSync(fileURLToPath(MANIFEST), "utf8"));

describe("manifest.yml", () => {
  const validate = buildValidator();

  it("wires the validator correctly: the schema repo's own examples pass and fail", () => {
    expect(validate(readJson("example.valid.json")), errorsOf(validate)).toBe(true);
    expect(validate(readJson("example.invalid.json"))).toBe(false);
  });

  it("is a valid Slack app manifest", () => {
    expect(validate(manifest), errorsOf(validate)).toBe(true);
  });

  it("is named Task Agent, for the app and the bot user", () => {
    expect(at(manifest, "display_information", "name")).toBe("Task Agent");
    expect(at(manifest, "features", "bot_user", "display_name")).toBe("Task Agent");
  });

  it("asks for exactly the bot scopes the app uses", () => {
    const scopes = at(manifest, "oauth_config", "scopes", "bot");
    expect(Array.isArray(scopes) ? [...scopes].sort() : scopes).toEqual(
      [...EXPECTED_BOT_SCOPES].sort(),
    );
    expect(at(manifest, "oauth_config", "scopes", "user")).toBeUndefined();
  });

  it("asks for the same bot scopes when installed through OAuth (many workspaces)", () => {
    expect([...BOT_SCOPES].sort()).toEqual([...EXPECTED_BOT_SCOPES].sort());
    expect(new Set(BOT_SCOPES).size).toBe(BOT_SCOPES.length);
  });

  it("declares the New task shortcuts the app listens for", () => {
    expect(at(manifest, "features", "shortcuts")).toEqual([
      expect.objectContaining({ type: "global", callback_id: "new_task" }),
      expect.objectContaining({ type: "message", callback_id: "ask_task_agent" }),
    ]);
  });

  it("declares /task", () => {
    const commands = at(manifest, "features", "slash_commands");
    expect(Array.isArray(commands)).toBe(true);
    const task = Array.isArray(commands)
      ? commands.find((c: unknown) => at(c, "command") === "/task")
      : undefined;
    expect(task).toEqual({
      command: "/task",
      description: "Run a task on the Task Execution Service",
      usage_hint: "[what you want built]",
      should_escape: false,
    });
  });

  it("subscribes to messages everywhere the bot is, to uninstalls and deleted channels, and enables interactivity and DMs", () => {
    expect(at(manifest, "settings", "event_subscriptions", "bot_events")).toEqual([
      "agent_session_stopped",
      "app_home_opened",
      "app_mention",
      "app_context_changed",
      "app_uninstalled",
      // Deleted channels are forgotten (the scopes they need, channels:read and groups:read, are asked for already).
      "channel_deleted",
      "group_deleted",
      "function_executed",
      "message.channels",
      "message.groups",
      "message.im",
      "message.mpim",
      "tokens_revoked",
    ]);
    expect(at(manifest, "settings", "interactivity", "is_enabled")).toBe(true);
    expect(at(manifest, "features", "app_home", "messages_tab_enabled")).toBe(true);
    // App Home: recent tasks, New task and defaults (published on app_home_opened).
    expect(at(manifest, "features", "app_home", "home_tab_enabled")).toBe(true);
    expect(at(manifest, "features", "app_home", "messages_tab_read_only_enabled")).toBe(false);
  });

  it("describes the agent view, with the same suggested prompts as the app's defaults", () => {
    const description = at(manifest, "features", "agent_view", "agent_description");
    expect(typeof description === "string" && description.length <= 300).toBe(true);
    expect(description).toMatch(/websites, apps, documents and images/);
    expect(at(manifest, "features", "agent_view", "suggested_prompts")).toEqual(
      DEFAULT_SUGGESTED_PROMPTS,
    );
  });

  it("uses Socket Mode, is org-ready (for its workflow step) and has no token rotation", () => {
    expect(at(manifest, "settings", "socket_mode_enabled")).toBe(true);
    expect(at(manifest, "settings", "org_deploy_enabled")).toBe(true);
    expect(at(manifest, "settings", "function_runtime")).toBe("remote");
    expect(at(manifest, "settings", "token_rotation_enabled")).toBe(false);
  });

  it("defines the Workflow Builder step the app listens for, with the inputs and outputs it reads and sends", () => {
    const step = at(manifest, "functions", RUN_TASK);
    expect(at(step, "title")).toBe("Run a task");
    const inputs = at(step, "input_parameters");
    expect(isRecord(inputs) ? Object.keys(inputs) : inputs).toEqual([
      "prompt",
      "channel",
      "requester",
      "model",
      "effort",
    ]);
    expect(at(inputs, "prompt", "is_required")).toBe(true);
    expect(at(inputs, "channel", "type")).toBe("slack#/types/channel_id");
    expect(at(inputs, "requester", "type")).toBe("slack#/types/user_id");
    const outputs = at(step, "output_parameters");
    expect(isRecord(outputs) ? Object.keys(outputs).sort() : outputs).toEqual(
      Object.keys(stepOutputs({ state: "completed", answer: "a", files: ["f"], link: "l" })).sort(),
    );
    for (const name of ["answer", "status", "thread_link", "files"]) {
      expect(at(outputs, name, "type")).toBe("string");
    }
  });

  it("rejects a step whose parameter has no type (the schema checks the functions too)", () => {
    const broken: unknown = structuredClone(manifest);
    const prompt = at(broken, "functions", RUN_TASK, "input_parameters", "prompt");
    if (!isRecord(prompt)) throw new Error("no prompt input in manifest.yml");
    delete prompt.type;
    expect(validate(broken)).toBe(false);
  });

  it("rejects a broken variant (the schema is really applied to manifest.yml's shape)", () => {
    const broken: unknown = structuredClone(manifest);
    const commands = at(broken, "features", "slash_commands", 0);
    if (!isRecord(commands)) throw new Error("no slash command in manifest.yml");
    commands.command = "task"; // must start with "/"
    expect(validate(broken)).toBe(false);
  });
});
