import { describe, expect, it } from "vitest";
import { fromSlack } from "../../src/slack/listeners/surface.ts";
import { compareTs } from "../../src/slack/web-writer.ts";

describe("small pieces of the Slack side", () => {
  it("sends the service what the person typed, not Slack's escapes", () => {
    expect(fromSlack("if a &lt; b &amp;&amp; c &gt; d")).toBe("if a < b && c > d");
    expect(fromSlack("&amp;lt; stays as typed")).toBe("&lt; stays as typed");
  });

  it("orders Slack timestamps exactly, beyond float precision", () => {
    expect(compareTs("1700000000.000100", "1700000000.000099")).toBe(1);
    expect(compareTs("1700000000.000100", "1700000000.0001")).toBe(0);
    expect(compareTs("1699999999.999999", "1700000000.000000")).toBe(-1);
    expect(compareTs("9007199254.740993", "9007199254.740992")).toBe(1);
  });
});
