/**
 * Reading attached files from Slack's file host: the bot token goes to that host only, Slack's
 * refusals (its sign-in page, a deleted file, silence) become reasons people can read.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileUnavailableError } from "../../src/threads/ports.ts";
import { fileOrigins, slackFileSource } from "../../src/slack/file-source.ts";

const TOKEN = "xoxb-file-source-test-token";
type Route = (res: ServerResponse) => void;

/** A file host whose answer per path the test sets; it records the headers it got. */
async function fileHost() {
  const routes = new Map<string, Route>();
  const seen: Array<{ path: string; headers: IncomingHttpHeaders }> = [];
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", headers: req.headers });
    const route = routes.get(req.url ?? "");
    if (route) route(res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, origin, routes, seen };
}

let slack: Awaited<ReturnType<typeof fileHost>>;
let other: Awaited<ReturnType<typeof fileHost>>;
const infos: string[] = [];

const source = (timeoutMs = 2_000) =>
  slackFileSource({
    tokenFor: () => TOKEN,
    allowedOrigins: fileOrigins(`${slack.origin}/api/`),
    timeoutMs,
    client: {
      files: {
        info: async ({ file }: { file: string }) => {
          infos.push(file);
          return {
            ok: true,
            file: {
              id: file,
              name: "found.txt",
              size: 5,
              url_private_download: `${slack.origin}/found`,
            },
          };
        },
      },
    } as never,
  });

async function readAll(body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const c of body) chunks.push(c);
  return Buffer.concat(chunks).toString();
}

async function reason(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FileUnavailableError);
  return (err as Error).message;
}

beforeAll(async () => {
  slack = await fileHost();
  other = await fileHost();
});
afterAll(() => {
  slack.server.close();
  other.server.close();
});

describe("reading an attached file from Slack", () => {
  it("downloads it with the bot token and streams its exact bytes", async () => {
    slack.routes.set("/f/notes.txt", (res) =>
      res.writeHead(200, { "content-type": "text/plain", "content-length": "5" }).end("hello"),
    );
    const file = { id: "F1", name: "notes.txt", url: `${slack.origin}/f/notes.txt` };
    const opened = await source().open("T1", file);
    expect(opened.size).toBe(5);
    expect(await readAll(opened.body)).toBe("hello");
    expect(slack.seen.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("never sends the token to another host", async () => {
    other.routes.set("/x.pdf", (res) => res.end("x"));
    const file = { id: "F2", name: "x.pdf", url: `${other.origin}/x.pdf` };
    expect(await reason(source().open("T1", file))).toBe(
      "it is not stored on Slack's file host, so it was not read",
    );
    expect(other.seen).toEqual([]);
  });

  it("recognises Slack's sign-in page (a token without files:read)", async () => {
    slack.routes.set("/login", (res) =>
      res.writeHead(200, { "content-type": "text/html" }).end("<html>Sign in</html>"),
    );
    const file = { id: "F3", name: "a.pdf", url: `${slack.origin}/login` };
    expect(await reason(source().open("T1", file))).toContain("sign-in page");
  });

  it("says a deleted file is no longer in Slack", async () => {
    const file = { id: "F4", name: "gone.pdf", url: `${slack.origin}/nothing-here` };
    expect(await reason(source().open("T1", file))).toBe("it is no longer in Slack (deleted?)");
  });

  it("gives up on a host that does not answer in time", async () => {
    slack.routes.set("/silent", () => undefined);
    const file = { id: "F5", name: "slow.pdf", url: `${slack.origin}/silent` };
    expect(await reason(source(200).open("T1", file))).toBe(
      "it could not be downloaded from Slack (Slack did not answer in time)",
    );
  });

  it("fails the read when Slack stops sending halfway", async () => {
    slack.routes.set("/stalls", (res) => {
      res.writeHead(200, { "content-type": "text/csv", "content-length": "100" });
      res.write("half,");
    });
    const file = { id: "F6", name: "half.csv", url: `${slack.origin}/stalls` };
    const opened = await source(200).open("T1", file);
    await expect(readAll(opened.body)).rejects.toThrow("Slack stopped sending it");
  });

  it("asks files.info for a file the event named only by id", async () => {
    slack.routes.set("/found", (res) => res.writeHead(200, { "content-length": "5" }).end("found"));
    const described = await source().describe("T1", { id: "F7", name: "" });
    expect(described).toMatchObject({ name: "found.txt", size: 5, url: `${slack.origin}/found` });
    expect(infos).toContain("F7");
    expect(await readAll((await source().open("T1", described)).body)).toBe("found");
  });
});
