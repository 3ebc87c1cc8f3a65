import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  closestKey,
  formatOptions,
  mergeOptions,
  notForFollowUps,
  parsePrompt,
  type TaskOptions,
} from "../../src/threads/options.ts";

describe("inline task options", () => {
  it("takes the bracket group off the prompt and reads every key", () => {
    expect(
      parsePrompt("[model=gpt-x, agent=web-builder, effort=high, thinking, context] Build a page"),
    ).toEqual({
      ok: true,
      options: {
        model: "gpt-x",
        agent: "web-builder",
        effort: "high",
        thinking: true,
        context: true,
      },
      prompt: "Build a page",
    });
  });

  it("accepts spaces instead of commas, any case, and thinking=off", () => {
    expect(parsePrompt("  [Effort=LOW thinking=off]   write a poem ")).toEqual({
      ok: true,
      options: { effort: "low", thinking: false },
      prompt: "write a poem",
    });
  });

  it("keeps text that merely starts with a bracket as the prompt", () => {
    for (const text of ["[WIP] fix the landing page", "[1, 2, 3] sort these", "[] empty"]) {
      expect(parsePrompt(text)).toEqual({ ok: true, options: {}, prompt: text });
    }
  });

  it("reads a group of only known bare keys as options", () => {
    expect(parsePrompt("[thinking, context] plan a trip")).toEqual({
      ok: true,
      options: { thinking: true, context: true },
      prompt: "plan a trip",
    });
  });

  it("refuses a misspelled key, naming the valid keys and the closest one", () => {
    const parsed = parsePrompt("[modle=gpt-x] hi");
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toContain("Unknown option `modle`");
    expect(parsed.error).toContain("Did you mean `model`?");
    expect(parsed.error).toContain("`model`, `agent`, `effort`, `thinking`, `context`");
  });

  it("refuses bad values and repeated keys with a sentence that says what is allowed", () => {
    const errors = [
      "[effort=max] x",
      "[thinking=maybe] x",
      "[model=] x",
      "[model=a, model=b] x",
    ].map((t) => {
      const p = parsePrompt(t);
      return p.ok ? "" : p.error;
    });
    expect(errors[0]).toContain("low, medium or high");
    expect(errors[1]).toContain("on or off");
    expect(errors[2]).toContain("needs a value");
    expect(errors[3]).toContain("given twice");
  });

  it("suggests the closest key for prefixes and small typos only", () => {
    expect(closestKey("eff")).toBe("effort");
    expect(closestKey("thnking")).toBe("thinking");
    expect(closestKey("agnet")).toBe("agent");
    expect(closestKey("temperature")).toBeUndefined();
  });

  it("lets inline options beat personal defaults, which beat channel defaults", () => {
    const inline: TaskOptions = { model: "inline" };
    const personal: TaskOptions = { model: "personal", effort: "high" };
    const channel: TaskOptions = { model: "channel", effort: "low", agent: "c-agent" };
    expect(mergeOptions(inline, personal, channel)).toEqual({
      model: "inline",
      effort: "high",
      agent: "c-agent",
    });
  });

  it("names the options a follow-up cannot apply", () => {
    expect(notForFollowUps({ model: "m", thinking: false })).toEqual(["model", "thinking"]);
    expect(notForFollowUps({})).toEqual([]);
  });

  const name = fc.stringMatching(/^[A-Za-z0-9._:/-]{1,30}$/);
  const options = fc.record(
    {
      model: name,
      agent: name,
      effort: fc.constantFrom("low" as const, "medium" as const, "high" as const),
      thinking: fc.boolean(),
      context: fc.boolean(),
    },
    { requiredKeys: [] },
  );

  it("gives back any options it formatted, with the prompt untouched (property)", () => {
    fc.assert(
      fc.property(options, fc.string({ maxLength: 200 }), (opts, prompt) => {
        const group = formatOptions(opts);
        const parsed = parsePrompt(`${group} ${prompt}`);
        if (group === "") return;
        expect(parsed).toEqual({ ok: true, options: opts, prompt: prompt.trim() });
      }),
    );
  });

  it("leaves any text that does not open with a bracket as the whole prompt (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        fc.pre(!text.trimStart().startsWith("["));
        expect(parsePrompt(text)).toEqual({ ok: true, options: {}, prompt: text.trim() });
      }),
    );
  });
});
