/**
 * Raw tool-execution JSON that arrives as content (seen in deployed streams) becomes a step of
 * the run, in every stream shape, and never text.
 */
import { describe, expect, it } from "vitest";
import { normalizeObject, toolStep } from "../../src/service/stream.ts";

const TOOL = '{"tool":"str_replace","args":{"path":"/workspace/index.html","old_str":"<h1>"}}';

describe("tool steps in a stream", () => {
  it("names the tool and the file it worked on", () => {
    expect(toolStep(TOOL)).toBe("str_replace index.html");
    expect(toolStep('{"name":"run_shell","arguments":{"command":"npm test"}}')).toBe(
      "run_shell npm test",
    );
    expect(toolStep('{"tool_name":"search"}')).toBe("search");
  });

  it("leaves ordinary content alone, JSON answers included", () => {
    expect(toolStep("Here is the page.")).toBeUndefined();
    expect(toolStep('{"name":"Ada","age":36}')).toBeUndefined();
    expect(toolStep("{not json}")).toBeUndefined();
  });

  it("turns a tool chunk into a step in each of the three shapes", () => {
    const step = [{ type: "step", title: "str_replace index.html" }];
    expect(normalizeObject({ type: "content", content: TOOL })).toEqual(step);
    expect(
      normalizeObject({
        type: "assistant",
        content: JSON.stringify({ role: "assistant", content: TOOL }),
        metadata: JSON.stringify({ stream_status: "chunk" }),
      }),
    ).toEqual(step);
    expect(normalizeObject({ role: "assistant", content: TOOL })).toEqual(step);
  });
});
