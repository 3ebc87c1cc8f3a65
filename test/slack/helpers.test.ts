import { describe, expect, it } from "vitest";
import { decodeFile } from "../../src/runs/file-delivery.ts";
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

  it("decodes inline files to the exact bytes the service means", () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
    const base = { file_id: "f", file_name: "a", included_inline: true };
    expect(decodeFile({ ...base, content: png.toString("base64"), encoding: "base64" })).toEqual(
      png,
    );
    expect(decodeFile({ ...base, content: "café 🚀", encoding: "utf-8" })?.toString("utf8")).toBe(
      "café 🚀",
    );
    expect(decodeFile({ ...base, content: "x", included_inline: false })).toBeUndefined();
    expect(
      decodeFile({ ...base, content: "??", encoding: "gzip", file_type: "application/zip" }),
    ).toBeUndefined();
  });
});
