/** Slack's file host for unit tests (`SlackFileSource`): files by id, read from memory. */
import {
  FileUnavailableError,
  type OpenedFile,
  type SlackFileRef,
  type SlackFileSource,
} from "../../../src/threads/ports.ts";

/** Slack's file host: files by id, or the reason one cannot be read; records what it opened. */
export class FakeFiles implements SlackFileSource {
  readonly #files = new Map<string, Buffer | string>();
  readonly opened: string[] = [];
  readonly cancelled: string[] = [];
  /** Files whose download stops halfway through. */
  readonly breaksHalfway = new Set<string>();
  #n = 0;

  /** A file in Slack; `unavailable` makes its download fail with that reason. */
  add(name: string, content: string | { size: number }, unavailable?: string): SlackFileRef {
    const id = `F${++this.#n}`;
    const bytes = typeof content === "string" ? Buffer.from(content) : Buffer.alloc(content.size);
    this.#files.set(id, unavailable ?? bytes);
    return {
      id,
      name,
      size: bytes.length,
      url: `https://files.slack.com/files-pri/T1-${id}/${name}`,
    };
  }

  async describe(_teamId: string, file: SlackFileRef): Promise<SlackFileRef> {
    return file;
  }

  async open(_teamId: string, file: SlackFileRef): Promise<OpenedFile> {
    const found = this.#files.get(file.id);
    if (found === undefined) throw new FileUnavailableError("it is no longer in Slack (deleted?)");
    if (typeof found === "string") throw new FileUnavailableError(found);
    this.opened.push(file.name);
    const breaks = this.breaksHalfway.has(file.name);
    return {
      size: found.length,
      body: (async function* () {
        yield found.subarray(0, breaks ? found.length >> 1 : found.length);
        if (breaks) throw new FileUnavailableError("Slack stopped sending it");
      })(),
      cancel: () => this.cancelled.push(file.name),
    };
  }
}
