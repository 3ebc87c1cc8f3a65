/**
 * The Slack messages that open a run: a new task's prompt (the thread's parent) and the run's
 * "working…" message, posted while the service already works, in the order the requests
 * arrived; each step is recorded so that another instance can post what is missing.
 */
import type { Logger } from "pino";
import type { RunOpening, StartPlace } from "../store/types.ts";
import { describeSlackPostError, slackErrorCode } from "../view/errors.ts";
import { type MessagePayload, renderPrompt, renderRun } from "../view/render.ts";
import { showWorking } from "./agent-status.ts";
import type { SlackWriter, Workspaces } from "./ports.ts";

export interface OpeningDeps {
  readonly workspaces: Pick<Workspaces, "writer">;
  readonly logger: Logger;
}

interface Opened {
  readonly threadTs: string;
  readonly messageTs: string;
}

/** What exists already: the thread (a reply, a mention, a DM) and maybe the run's message. */
export interface OpeningPlace extends StartPlace {
  readonly messageTs?: string | undefined;
}

/** The prompt could not be posted: nothing shows the task, and the person is told why. */
export class PromptNotPosted extends Error {
  readonly advice: string;

  constructor(code: string, advice: string, cause: unknown) {
    super(`could not post the prompt: ${code || "error"}`, { cause });
    this.name = "PromptNotPosted";
    this.advice = advice;
  }
}

/** The message a run shows until its first text arrives. */
function workingMessage(remark?: string): MessagePayload {
  const [first] = renderRun({
    text: "",
    state: "running",
    elapsedMs: 0,
    ...(remark ? { remark } : {}),
  });
  return first ?? { text: "Working…", blocks: [] };
}

/**
 * Posts what `place` lacks of the run's messages, telling `progress` after each post (the
 * caller records it). Rejects with PromptNotPosted when the prompt cannot be posted, or with
 * Slack's error when the working message cannot.
 */
export async function openRun(
  deps: OpeningDeps,
  place: OpeningPlace,
  plan: RunOpening,
  progress: (opened: { threadTs: string; messageTs?: string }) => Promise<void>,
): Promise<Opened> {
  const order = { since: plan.since };
  const writer = deps.workspaces.writer(place.teamId);
  let threadTs = place.threadTs;
  if (threadTs === undefined) {
    threadTs = await postPrompt({ writer, logger: deps.logger }, place.channelId, plan);
    await progress({ threadTs });
  }
  let messageTs = place.messageTs;
  if (messageTs === undefined) {
    messageTs = await writer.post(place.channelId, workingMessage(plan.remark), threadTs, order);
    await progress({ threadTs, messageTs });
    if (plan.surface === "dm") {
      const key = { teamId: place.teamId, channelId: place.channelId, threadTs };
      await showWorking(deps, key, plan.title);
    }
  }
  return { threadTs, messageTs };
}

/**
 * Posts the prompt; its ts is the thread's. Posting first matters: without `chat:write.public`
 * (not in the manifest, on purpose) a post that succeeds proves the bot is a member and will
 * hear replies. Only when it is not in a public channel does it join and post again.
 */
async function postPrompt(
  deps: { readonly writer: SlackWriter; readonly logger: Logger },
  channelId: string,
  plan: RunOpening,
): Promise<string> {
  const { writer, logger } = deps;
  const payload = renderPrompt(plan.userId, plan.prompt?.text ?? "", plan.prompt?.fileNames);
  const order = { since: plan.since };
  try {
    return await writer.post(channelId, payload, undefined, order).catch(async (err: unknown) => {
      if (slackErrorCode(err) !== "not_in_channel" || !channelId.startsWith("C")) throw err;
      if (!(await writer.join(channelId))) throw err;
      return writer.post(channelId, payload, undefined, order);
    });
  } catch (err) {
    const code = slackErrorCode(err) ?? "";
    logger.warn({ err, code, channel: channelId }, "cannot post the task in the channel");
    const advice =
      describeSlackPostError(code, channelId) ??
      `I couldn't post in this channel (Slack said \`${code || "error"}\`). Please try again.`;
    throw new PromptNotPosted(code, advice, err);
  }
}
