/**
 * Defaults: which apply to a new task (explicit options over personal over channel, and which
 * filled a gap), and who may change a channel's (anyone when allowed, its creator, admins).
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { Preferences } from "../../src/threads/preferences.ts";
import { createMemoryStore } from "../support/fakes/memory-store.ts";

function preferences(opts: { anyone?: boolean; admins?: string[]; creator?: string } = {}) {
  return new Preferences({
    store: createMemoryStore(),
    workspaces: {
      writer: () => ({ isAdmin: async (u: string) => (opts.admins ?? []).includes(u) }),
    },
    directory: { channelCreator: async () => opts.creator },
    settingsAnyone: opts.anyone,
    logger: pino({ level: "silent" }),
    now: () => 1,
  });
}

describe("task defaults", () => {
  it("puts explicit options over personal defaults over channel defaults, naming the defaults used", async () => {
    const p = preferences();
    await p.saveDefaults("T1", { kind: "user", userId: "U1" }, { model: "mine", effort: "low" });
    await p.saveDefaults(
      "T1",
      { kind: "channel", channelId: "C1" },
      {
        model: "theirs",
        agent: "helper",
        thinking: true,
      },
    );
    const used = await p.forTask("T1", "U1", "C1", { effort: "high" });
    expect(used.options).toEqual({
      model: "mine",
      agent: "helper",
      effort: "high",
      thinking: true,
    });
    expect(used.applied).toEqual([
      { key: "model", value: "mine", from: "personal" },
      { key: "agent", value: "helper", from: "channel" },
      { key: "thinking", value: true, from: "channel" },
    ]);
    // Another person in the channel gets the channel's; in a DM there are no channel defaults.
    expect((await p.forTask("T1", "U2", "C1", {})).options.model).toBe("theirs");
    expect((await p.forTask("T1", "U2", "D1", {})).options).toEqual({});
    // Another workspace knows none of them.
    expect((await p.forTask("T2", "U1", "C1", {})).applied).toEqual([]);
  });

  it("lets the channel's creator and admins change its defaults, or anyone when allowed", async () => {
    const p = preferences({ creator: "U_CREATOR", admins: ["U_ADMIN"] });
    expect(await p.mayChangeChannel("T1", "C1", "U_CREATOR")).toBe(true);
    expect(await p.mayChangeChannel("T1", "C1", "U_ADMIN")).toBe(true);
    expect(await p.mayChangeChannel("T1", "C1", "U_SOMEONE")).toBe(false);
    expect(await preferences({ anyone: true }).mayChangeChannel("T1", "C1", "U_SOMEONE")).toBe(
      true,
    );
  });
});

describe("recent tasks", () => {
  it("lists a task by the start of its prompt on one line, cut between two emoji", async () => {
    // Found by fuzzing the Home tab: the 149th character could be the first half of an emoji.
    const p = preferences();
    // Started now: a task older than the retention is not listed.
    const thread = { channelId: "C1", threadTs: "1.2", startedAt: Date.now() };
    await p.taskStarted("T1", "U1", { ...thread, prompt: `Draw:\n\n  ${"🎨".repeat(100)}` });
    const [task] = await p.recentTasks("T1", "U1");
    expect(task?.prompt).toBe(`Draw: ${"🎨".repeat(71)}…`);
    expect(task?.prompt.isWellFormed()).toBe(true);
  });
});
