/**
 * Fuzzing the views of a person's preferences: the defaults modal (personal or a channel's)
 * and the App Home tab with their recent tasks, listed the way the app lists them. Whatever
 * people type and the configuration offers, Slack's views.open / views.publish would accept
 * them (oracle: tools/local-slack's validateView) and no text pings.
 */
import fc from "fast-check";
import { pino } from "pino";
import { describe } from "vitest";
import { Preferences, RECENT_TASKS_SHOWN } from "../../src/threads/preferences.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";
import type { RunState, TaskDefaults } from "../../src/store/types.ts";
import { renderDefaultsModal, summarizeDefaults } from "../../src/view/defaults.ts";
import { renderHome } from "../../src/view/home.ts";
import { channelId, inline, markdown, ts } from "./arbitraries.ts";
import { fuzz } from "./fuzz.ts";
import { allWellFormed, configNames, expectGoodView } from "./view-oracle.ts";

/** Defaults as the defaults form saves them: names of 1 to 150 characters without spaces, <, > or `. */
const defaultName = fc
  .oneof(inline, fc.string({ unit: "grapheme", maxLength: 150 }))
  .map((s) => s.replace(/[\s<>`]/g, "").slice(0, 150))
  .filter((s) => s !== "" && s.isWellFormed());
const savedDefaults: fc.Arbitrary<TaskDefaults> = fc.record(
  {
    model: defaultName,
    agent: defaultName,
    effort: fc.constantFrom("low" as const, "medium" as const, "high" as const),
    thinking: fc.boolean(),
  },
  { requiredKeys: [] },
);

/** A task as the app starts it: any prompt a person may type, in a channel or a DM. */
const recentTask = fc.record({
  channelId,
  threadTs: ts,
  prompt: fc.oneof(inline, markdown, fc.string({ maxLength: 400 })),
  startedAt: fc.integer({ min: 0, max: 4_102_444_800_000 }), // 1970 to 2100
  surface: fc.constantFrom("channel" as const, "dm" as const, undefined),
  status: fc.constantFrom<RunState>("running", "completed", "failed", "stopped", "error"),
});

/** Slack's date formatting as the Home tab writes it (`<!date^…|fallback>`), which pings nobody. */
const dateToken = (ms: number): string =>
  `<!date^${Math.floor(ms / 1000)}^{date_short_pretty} {time}|${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC>`;

describe("fuzz: preferences views", () => {
  fuzz("Defaults modal: accepted for any configured names and any saved defaults", () =>
    fc.property(
      configNames,
      configNames,
      fc.option(channelId, { nil: undefined }),
      savedDefaults,
      (models, agents, channel, current) => {
        const view = renderDefaultsModal({
          scope: channel === undefined ? { kind: "user" } : { kind: "channel", channelId: channel },
          current,
          choices: { models, agents },
        });
        // "Defaults for tasks started in <#C…>": a link to the channel, which pings nobody.
        const allowed = channel === undefined ? [] : [`<#${channel}>`];
        expectGoodView(view, allWellFormed([models, agents, current]), allowed);
      },
    ),
  );

  fuzz("App Home: accepted for any recent tasks, listed as the app lists them", () =>
    fc.asyncProperty(
      fc.array(recentTask, { maxLength: RECENT_TASKS_SHOWN + 5 }),
      savedDefaults,
      fc.option(fc.oneof(fc.webUrl(), fc.constant("https://acme.slack.com/")), { nil: undefined }),
      async (started, defaults, teamUrl) => {
        const preferences = new Preferences({
          // Any start from 1970 to 2100 is listed: this is about rendering, not the retention.
          store: createMemoryStore({ retentionMs: 200 * 365 * 24 * 3600 * 1000 }),
          workspaces: { writer: () => ({ isAdmin: async () => false }) },
          logger: pino({ level: "silent" }),
          now: () => 1_700_000_000_000,
        });
        for (const t of started) {
          const { status, ...task } = t;
          await preferences.taskStarted("T1", "U1", task);
          if (status !== "running") await preferences.taskState("T1", "U1", task, status);
        }
        const tasks = await preferences.recentTasks("T1", "U1");
        const view = renderHome({ tasks, defaults, teamUrl });
        // On purpose: each task's channel (a link) and its start (Slack's date formatting).
        // And the summary of the person's own defaults, shown to them alone (a view notifies
        // nobody): the form refuses <, > and spaces in names, so a bare "@here" is all it holds.
        const allowed = [...tasks.flatMap((t) => [`<#${t.channelId}>`, dateToken(t.startedAt)])];
        const summary = summarizeDefaults(defaults);
        if (summary !== undefined) allowed.push(summary);
        expectGoodView(view, allWellFormed([started, defaults]), allowed);
      },
    ),
  );
});
