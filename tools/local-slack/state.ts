// The workspace the double keeps: identity, channels and membership, messages and threads, ephemerals,
// reactions, files, users and assistant statuses, plus the wire shapes Slack returns them in.
import { ApiFailure } from "./errors.ts";
import type {
  AssistantStatus,
  FunctionDefinition,
  FunctionExecution,
  SuggestedPrompts,
  LocalSlackOptions,
  SlackEphemeral,
  SlackFile,
  SlackMessage,
  SlackUser,
} from "./types.ts";
import { channelKind, clone, nonEmpty, str } from "./util.ts";

export interface StoredMessage extends SlackMessage {
  deleted?: boolean;
  streamEndError?: string;
  /** When chat.startStream created it (the double's clock): its lifetime counts from here. */
  streamStartedAt?: number;
  /** UTF-8 bytes of the text streamed into it (SLACK_LIMITS.streamMessageBytesMax). */
  streamBytes?: number;
}

/**
 * How long Slack keeps a native stream open after chat.startStream: about five minutes, after
 * which chat.appendStream and chat.stopStream answer `message_not_in_streaming_state`. Slack
 * does not document it; developers report it (e.g. slackapi/bolt-js and node-slack-sdk issues
 * about streams ending after ~5 minutes), and Vercel's Chat SDK rotates its streams at four.
 */
export const DEFAULT_STREAM_LIFETIME_MS = 5 * 60_000;

export interface StoredFile extends SlackFile {
  created: number;
}

export interface UserFile {
  id: string;
  name: string;
  bytes: Buffer;
  mimetype: string;
}

/** An agent session's status as agents.sessions.setStatus set it. */
export interface AgentSession {
  channel: string;
  thread_ts: string;
  status: string;
  title: string;
  at: number;
}

/** A view the app opened, as Slack keeps it (its id, who sees it, what it shows). */
export interface OpenedView {
  id: string;
  /** The trigger that opened a modal, or the user whose Home tab was published. */
  trigger?: string;
  user?: string;
  view: Record<string, unknown>;
  at: number;
}

/** A user group (`@handle`) of one workspace, as usergroups.list describes it. */
export interface UserGroup {
  id: string;
  teamId: string;
  handle: string;
  name: string;
  users: string[];
  /** Disabled groups (usergroups.disable) answer only with `include_disabled`. */
  disabled: boolean;
}

export class Workspace {
  readonly botToken: string;
  /** The app-level token (`xapp-…`) that may open Socket Mode connections. */
  readonly appToken = "xapp-1-A0001-test-app-token";
  readonly teamId: string;
  readonly teamName: string;
  readonly appId: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly botName: string;
  /** The workspace URL auth.test reports; permalinks are built from it. */
  readonly teamUrl = "https://local-slack.slack.com/";
  /** Base URL of the HTTP server (`http://127.0.0.1:PORT/`), set once it listens. */
  baseUrl = "http://127.0.0.1:0/";
  /** Where `apps.connections.open` sends a Socket Mode client. */
  socketModeUrl: string | undefined;
  readonly notInChannel: Set<string>;
  readonly unknownChannels: Set<string>;
  readonly users = new Map<string, SlackUser>();
  readonly channelNames = new Map<string, string>();
  readonly messages = new Map<string, Map<string, StoredMessage>>();
  readonly ephemerals: SlackEphemeral[] = [];
  /** `channel/ts` → reaction name → users. */
  readonly reactions = new Map<string, Map<string, Set<string>>>();
  readonly files = new Map<string, StoredFile>();
  readonly userFiles = new Map<string, UserFile>();
  /** `channel/thread_ts` → current assistant status. */
  readonly currentStatus = new Map<string, string>();
  readonly assistantStatuses: AssistantStatus[] = [];
  /** Every assistant.threads.setSuggestedPrompts call, oldest first. */
  readonly suggestedPrompts: SuggestedPrompts[] = [];
  /** Agent-view thread titles by `channel/thread_ts` (assistant.threads.setTitle). */
  readonly threadTitles = new Map<string, string>();
  /** Agent sessions by `channel/thread_ts`, and every status set, oldest first. */
  readonly sessions = new Map<string, AgentSession>();
  readonly sessionHistory: AgentSession[] = [];
  /** Views opened (views.open) or published (views.publish), oldest first. */
  readonly views: OpenedView[] = [];
  /** Home tabs published (views.publish): each person's current one, and every publish in order. */
  readonly homeTabs = new Map<string, OpenedView>();
  readonly homePublishes: OpenedView[] = [];
  /**
   * Each channel's members, for the channels a test set (LocalSlack.setChannelMembers); any
   * other channel has every user of the workspace, the bot unless it is not in the channel.
   */
  readonly channelMembers = new Map<string, Set<string>>();
  /** Who created each channel (conversations.info `creator`). */
  readonly channelCreators = new Map<string, string>();
  /** User groups by id (each belongs to one workspace). */
  readonly userGroups = new Map<string, UserGroup>();
  /** The app's Workflow Builder steps by callback id (the `functions` option). */
  readonly functions: ReadonlyMap<string, FunctionDefinition>;
  /** Executions of the app's steps by id, as `executeFunction` started them. */
  readonly executions = new Map<string, FunctionExecution>();
  /** Trigger ids already used to open a view: Slack takes each once. */
  readonly usedTriggers = new Set<string>();
  /** A native stream ends this long after chat.startStream (mutable; Infinity = never). */
  streamLifetimeMs: number;
  readonly now: () => number;
  #tsCounter: number;
  #fileCounter = 0;

  constructor(options: LocalSlackOptions) {
    this.now = options.now ?? Date.now;
    this.streamLifetimeMs = options.streamLifetimeMs ?? DEFAULT_STREAM_LIFETIME_MS;
    this.botToken = options.botToken ?? "xoxb-test-token";
    this.teamId = options.teamId ?? "T0001";
    this.teamName = options.teamName ?? "Local Slack";
    this.appId = options.appId ?? "A0001";
    this.botUserId = options.botUserId ?? "UBOT";
    this.botId = options.botId ?? "BBOT";
    this.botName = options.botName ?? "taskbot";
    this.notInChannel = new Set(options.notInChannel ?? []);
    this.unknownChannels = new Set(options.unknownChannels ?? []);
    this.#tsCounter = (options.firstTsMicros ?? 1_700_000_000_000_100) - 100;
    for (const [id, name] of Object.entries(options.channelNames ?? {})) {
      this.channelNames.set(id, name);
    }
    this.functions = new Map(Object.entries(options.functions ?? {}));
    for (const [id, user] of Object.entries(options.channelCreators ?? {})) {
      this.channelCreators.set(id, user);
    }
    this.addUser({
      id: this.botUserId,
      name: this.botName,
      real_name: "Task Agent",
      is_bot: true,
      team_id: this.teamId,
    });
    for (const user of options.users ?? []) this.addUser(user);
  }

  addUser(user: SlackUser): void {
    this.users.set(user.id, { team_id: this.teamId, ...user });
  }

  nextTs(): string {
    this.#tsCounter += 100;
    const seconds = Math.floor(this.#tsCounter / 1_000_000);
    const micros = this.#tsCounter % 1_000_000;
    return `${seconds}.${String(micros).padStart(6, "0")}`;
  }

  nextFileId(): string {
    this.#fileCounter += 1;
    return `F${String(this.#fileCounter).padStart(10, "0")}`;
  }

  store(message: StoredMessage): StoredMessage {
    let channelMessages = this.messages.get(message.channel);
    if (!channelMessages) {
      channelMessages = new Map();
      this.messages.set(message.channel, channelMessages);
    }
    channelMessages.set(message.ts, message);
    return message;
  }

  /** A new message written by the bot (ts assigned): the calling workspace's bot when given. */
  storeBotMessage(
    channel: string,
    text: string,
    bot?: { readonly userId: string; readonly id: string },
  ): StoredMessage {
    return this.store({
      channel,
      ts: this.nextTs(),
      user: bot?.userId ?? this.botUserId,
      bot_id: bot?.id ?? this.botId,
      app_id: this.appId,
      text,
    });
  }

  /** Live (not deleted) messages of a channel in ts order. */
  live(channel: string): StoredMessage[] {
    return [...(this.messages.get(channel)?.values() ?? [])]
      .filter((m) => !m.deleted)
      .sort(
        (a, b) => Number.parseFloat(a.ts) - Number.parseFloat(b.ts) || a.ts.localeCompare(b.ts),
      );
  }

  /** Like conversations.history: top-level and broadcast messages, or every reply too. */
  channelMessages(channel: string, includeReplies: boolean): StoredMessage[] {
    return this.live(channel).filter(
      (m) =>
        includeReplies ||
        m.thread_ts === undefined ||
        m.thread_ts === m.ts ||
        m.reply_broadcast === true,
    );
  }

  /** The thread's parent (if known) followed by its replies. */
  threadMessages(channel: string, threadTs: string): StoredMessage[] {
    return this.live(channel).filter((m) => m.ts === threadTs || m.thread_ts === threadTs);
  }

  /**
   * Ends a stream that outlived `streamLifetimeMs`, as Slack does (checked whenever the message
   * is read or streamed to, so a test clock moves it too). Returns the message.
   */
  expireIfOld<M extends StoredMessage>(m: M): M {
    if (
      m.streaming_state === "in_progress" &&
      m.streamStartedAt !== undefined &&
      this.now() - m.streamStartedAt >= this.streamLifetimeMs
    ) {
      m.streaming_state = "ended";
      m.streamEndError = "message_not_in_streaming_state";
    }
    return m;
  }

  /** A copy of the message without the double's bookkeeping fields. */
  snapshot(m: StoredMessage): SlackMessage {
    const {
      deleted: _deleted,
      streamEndError: _end,
      streamStartedAt: _at,
      streamBytes: _bytes,
      ...rest
    } = this.expireIfOld(m);
    return clone(rest);
  }

  /** The message as Slack returns it in API responses. */
  wire(message: SlackMessage): Record<string, unknown> {
    const m = this.expireIfOld(message);
    const out: Record<string, unknown> = {
      type: "message",
      text: m.text,
      user: m.user,
      ts: m.ts,
      team: this.teamId,
    };
    if (m.bot_id !== undefined) out.bot_id = m.bot_id;
    if (m.app_id !== undefined) out.app_id = m.app_id;
    if (m.thread_ts !== undefined) out.thread_ts = m.thread_ts;
    if (m.blocks !== undefined) out.blocks = clone(m.blocks);
    if (m.metadata !== undefined) out.metadata = clone(m.metadata);
    if (m.edited !== undefined) out.edited = { ...m.edited };
    if (m.streaming_state !== undefined) out.streaming_state = m.streaming_state;
    if (m.files !== undefined) {
      // Like Slack, a shared file comes with its name and title.
      out.files = m.files.map((id) => {
        const f = this.files.get(id) ?? this.userFiles.get(id);
        return f
          ? { id, name: f.name, title: ("title" in f ? f.title : f.name) ?? f.name }
          : { id };
      });
    }
    return out;
  }

  /** Resolves the `channel` argument: must exist; a user id means the DM with that user. */
  channel(value: unknown): string {
    const channel = nonEmpty(value);
    if (channel === undefined || this.unknownChannels.has(channel)) {
      throw new ApiFailure("channel_not_found");
    }
    if (/^[UW]/.test(channel)) return `D${channel.slice(1)}`;
    return channel;
  }

  /** The members of a channel (conversations.members), in a stable order. */
  channelMemberIds(channel: string): string[] {
    const set = this.channelMembers.get(channel);
    const everyone = [...this.users.keys()].filter(
      (id) => id !== this.botUserId || !this.notInChannel.has(channel),
    );
    return set ? everyone.filter((id) => set.has(id) || id === this.botUserId) : everyone;
  }

  requireMember(channel: string): void {
    if (this.notInChannel.has(channel)) throw new ApiFailure("not_in_channel");
  }

  /** A live message the bot wrote; `notOwn` is the error when someone else wrote it. */
  /** A message the calling bot wrote (another workspace's bot may not edit it, as in Slack). */
  ownMessage(
    channel: string,
    ts: unknown,
    notOwn: string,
    botUserId = this.botUserId,
  ): StoredMessage {
    const key = str(ts);
    const message = key === undefined ? undefined : this.messages.get(channel)?.get(key);
    if (!message || message.deleted) throw new ApiFailure("message_not_found");
    if (message.user !== botUserId) throw new ApiFailure(notOwn);
    return message;
  }

  /** The conversation object of conversations.info / conversations.join. */
  channelObject(id: string): Record<string, unknown> {
    const kind = channelKind(id);
    return {
      id,
      name: this.channelNames.get(id) ?? id.toLowerCase(),
      is_channel: kind === "channels",
      is_group: kind === "groups",
      is_im: kind === "im",
      is_mpim: false,
      is_private: kind !== "channels",
      is_archived: false,
      is_member: !this.notInChannel.has(id),
      context_team_id: this.teamId,
      ...(this.channelCreators.has(id) ? { creator: this.channelCreators.get(id) } : {}),
    };
  }

  /** Posting in a thread clears its assistant status, as Slack does. */
  clearStatus(channel: string, threadTs: string | undefined): void {
    if (threadTs !== undefined) this.currentStatus.delete(`${channel}/${threadTs}`);
  }

  /** A file's private URL, as files.slack.com serves it. */
  filePrivateUrl(id: string, name: string): string {
    return `${this.baseUrl}files-pri/${this.teamId}-${id}/${encodeURIComponent(name)}`;
  }
}
