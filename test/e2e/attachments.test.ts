/**
 * Files people attach in Slack reach the task service with their exact bytes: read from the
 * local Slack's file host with the bot token, streamed into the create or continue request.
 * What cannot go is named privately with the reason, and the rest still go.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNEL, Harness, OWNER } from "../support/harness.ts";
import { storeBackends } from "../support/needs.ts";

const DM = "D0OWNERDM";
const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

/** A web server that is not Slack's file host: it records every request it gets. */
async function foreignHost(): Promise<{
  server: Server;
  url: string;
  seen: IncomingHttpHeaders[];
}> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.end("not a file");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/`, seen };
}

describe.each(storeBackends())("attachments with %s", (_name, redis) => {
  let h: Harness;
  let foreign: Awaited<ReturnType<typeof foreignHost>>;
  beforeAll(async () => {
    h = await Harness.start({ redisUrl: redis });
    foreign = await foreignHost();
  });
  afterAll(async () => {
    await h?.close();
    foreign?.server.close();
  });

  /** The private notes the owner got in a thread. */
  const notes = (channel: string) => h.slack.ephemerals(channel, OWNER).map((e) => e.text);

  it("starts a task from a DM that is only a picture, sending the picture byte for byte", async () => {
    const bytes = randomBytes(300_000);
    const picture = h.slack.addUserFile({ name: "mockup.png", bytes, mimetype: "image/png" });
    const ts = await h.say(DM, "", { files: [picture] });
    await h.finals(DM, ts);
    const run = h.sim.runs().find((r) => r.request.files.some((f) => f.name === "mockup.png"));
    expect(run?.request.files).toEqual([
      { name: "mockup.png", contentType: "image/png", size: bytes.length, sha256: sha256(bytes) },
    ]);
    expect(run?.prompt ?? "").toBe("");
  });

  it("sends every file of a mention with its prompt and options", async () => {
    const brief = h.slack.addUserFile({ name: "brief.md", bytes: "# Brief\nA bakery." });
    const data = h.slack.addUserFile({ name: "prices.csv", bytes: "bread,3\ncake,12\n" });
    const text = `<@${h.slack.botUserId}> [effort=high] Build the page from these`;
    const ts = await h.say(CHANNEL, text, { mention: true, files: [brief, data] });
    await h.finals(CHANNEL, ts);
    const run = h.sim.runs().find((r) => r.prompt === "Build the page from these");
    expect(run?.request.reasoningEffort).toBe("high");
    expect(run?.request.files.map((f) => [f.name, f.sha256])).toEqual([
      ["brief.md", sha256("# Brief\nA bakery.")],
      ["prices.csv", sha256("bread,3\ncake,12\n")],
    ]);
  });

  it("names privately the files that cannot go, with the reason, and sends the rest", async () => {
    const good = h.slack.addUserFile({ name: "notes.txt", bytes: "keep it simple" });
    const program = h.slack.addUserFile({ name: "setup.exe", bytes: "MZ" });
    const huge = { ...h.slack.addUserFile({ name: "video.zip", bytes: "PK" }), size: 60 * 2 ** 20 };
    const deleted = {
      ...good,
      id: "F0GONE",
      name: "old.pdf",
      url_private_download: `${h.slack.url}files-pri/T0001-F0GONE/old.pdf`,
    };
    const elsewhere = {
      id: "F0EXT",
      name: "elsewhere.pdf",
      size: 10,
      url_private_download: `${foreign.url}elsewhere.pdf`,
    };
    const ts = await h.say(DM, "Summarise what you can", {
      files: [good, program, huge, deleted, elsewhere],
    });
    await h.finals(DM, ts);
    const run = h.sim.runs().find((r) => r.prompt === "Summarise what you can");
    expect(run?.request.files.map((f) => f.name)).toEqual(["notes.txt"]);
    const note = notes(DM).find((t) => t.includes("were not sent")) ?? "";
    expect(note).toContain("These 4 attachments were not sent");
    expect(note).toContain("setup.exe: the task service does not take .exe files");
    expect(note).toContain("video.zip: it is 60.0 MB; each file may be at most 50.0 MB");
    expect(note).toContain("old.pdf: it is no longer in Slack");
    expect(note).toContain("elsewhere.pdf: it is not stored on Slack's file host");
    expect(note).toContain("The other files went with your message.");
    // The file on another host was never asked for: the bot token went nowhere else.
    expect(foreign.seen).toEqual([]);
  });

  it("sends the first ten of eleven files and names the eleventh", async () => {
    const files = Array.from({ length: 11 }, (_, i) =>
      h.slack.addUserFile({ name: `page-${i + 1}.txt`, bytes: `page ${i + 1}` }),
    );
    const ts = await h.say(DM, "Bind these pages", { files });
    await h.finals(DM, ts);
    const run = h.sim.runs().find((r) => r.prompt === "Bind these pages");
    expect(run?.request.files.map((f) => f.name)).toEqual(files.slice(0, 10).map((f) => f.name));
    expect(
      notes(DM).some((t) => t.includes("page-11.txt: only 10 files can go with one message")),
    ).toBe(true);
  });

  it("asks Slack for a file it was given only by id (files.info), then sends it", async () => {
    const logo = h.slack.addUserFile({
      name: "logo.svg",
      bytes: "<svg/>",
      mimetype: "image/svg+xml",
    });
    const ts = await h.say(DM, "Use this logo", {
      files: [{ id: logo.id, file_access: "check_file_info" }],
    });
    await h.finals(DM, ts);
    const run = h.sim.runs().find((r) => r.prompt === "Use this logo");
    expect(run?.request.files).toEqual([
      expect.objectContaining({ name: "logo.svg", sha256: sha256("<svg/>") }),
    ]);
    expect(h.slack.calls.some((c) => c.method === "files.info")).toBe(true);
  });

  it("does not start a task when none of the files can go and there is no text", async () => {
    const before = h.sim.runs().length;
    const program = h.slack.addUserFile({ name: "tool.exe", bytes: "MZ" });
    await h.say(DM, "", { files: [program] });
    await h.slack.waitFor(() => notes(DM).find((t) => t.includes("tool.exe")), {
      description: "the note naming tool.exe",
    });
    expect(notes(DM).find((t) => t.includes("tool.exe"))).toBe(
      "This attachment was not sent to the task service:\n• tool.exe: the task service does not take .exe files",
    );
    await h.settled();
    expect(h.sim.runs().length).toBe(before);
  });

  it("sends a reply's files with the follow-up, even when the reply waited in the queue", async () => {
    const ts = await h.say(DM, "Write a long story [sim:delay=20] [sim:length=2000]");
    // The reply comes while the run works (it waits in the thread's queue).
    await h.slack.waitFor(() => h.sim.runs().find((r) => r.promptText === "Write a long story"), {
      description: "the story's run",
    });
    const extra = h.slack.addUserFile({ name: "chapter.md", bytes: "## Chapter two" });
    await h.say(DM, "Add this chapter", { threadTs: ts, files: [extra] });
    await h.finals(DM, ts, 2);
    const followUp = h.sim.runs().find((r) => r.prompt === "Add this chapter");
    expect(followUp?.followUp).toBe(true);
    expect(h.slack.ephemerals(DM, OWNER).some((e) => e.text.includes("queued"))).toBe(true);
    expect(followUp?.request.files.map((f) => f.sha256)).toEqual([sha256("## Chapter two")]);
  });
});
