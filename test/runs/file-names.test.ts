/** File names from the service are shown and uploaded safely: a base name, no control codes. */
import { describe, expect, it } from "vitest";
import { safeFileName } from "../../src/runs/file-delivery.ts";

describe("file names from the service", () => {
  it("keeps only the last path segment, without control characters", () => {
    expect(safeFileName("../../etc/passwd")).toBe("passwd");
    expect(safeFileName("C:\\\\Users\\\\x\\\\report.pdf")).toBe("report.pdf");
    expect(safeFileName("bad\u0000na\u001bme\u0085.txt")).toBe("badname.txt");
    expect(safeFileName("dir/")).toBe("file");
    expect(safeFileName("..")).toBe("file");
  });

  it("shortens a long name to 200 characters, keeping its extension", () => {
    const name = safeFileName(`${"a".repeat(500)}.csv`);
    expect(name).toHaveLength(200);
    expect(name.endsWith("….csv")).toBe(true);
  });
});
