// LocalSlack: the local Slack Web API double assembled from its parts (state, method registry, rate
// tiers, faults, router) plus the test API to configure it, seed it and inspect what the app did.
import { EventEmitter } from "node:events";
import type { Server } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { ApiOutcome, Dispatcher } from "./dispatch.ts";
import { answerApiCall } from "./dispatch.ts";
import { Faults } from "./faults.ts";
import { sendJson } from "./http.ts";
import {
  type CallCount,
  countCalls,
  describeCalls,
  type ThreadLine,
  visibleText,
  waitFor,
  type WaitSource,
} from "./inspection.ts";
import { DEFAULT_ERROR_CODES } from "./limits.ts";
import type { ApiRequest } from "./http.ts";
import type { EventInput } from "./slack-requests.ts";
import { METHOD_FAMILIES } from "./methods/index.ts";
import { buildRegistry } from "./methods/registry.ts";
import { LocalOAuth } from "./oauth.ts";
import { RateTiers } from "./rate-tiers.ts";
import { type RouteHost, route } from "./server.ts";
import { type AgentSession, type OpenedView, type UserGroup, Workspace } from "./state.ts";
import {
  type EnterpriseOptions,
  type LocalEnterprise,
  type LocalTeam,
  type TeamOptions,
  Tenancy,
} from "./tenancy.ts";
import type {
  AssistantStatus,
  SuggestedPrompts,
  FailNextOptions,
  FaultPredicate,
  FunctionExecution,
  LocalSlackEvents,
  LocalSlackOptions,
  RateTier,
  RecordedCall,
  ResponseUrlPost,
  SlackEphemeral,
  SlackFile,
  SlackMessage,
  SlackReaction,
  SlackUser,
  ValidationFailure,
  WaitOptions,
} from "./types.ts";
import { deliverEvents, type EventDestination, uninstallEvents } from "./uninstall.ts";
import { channelDeletedEvent, messageDeletedEvent } from "./deletions.ts";
import { functionExecution } from "./workflows.ts";
import { clone, truncate } from "./util.ts";

export class LocalSlack extends EventEmitter<LocalSlackEvents> {
  readonly botToken: string;
  /** The app-level token (`xapp-…`) that may open Socket Mode connections. */
  readonly appToken: string;
  readonly teamId: string;
  readonly teamName: string;
  readonly appId: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly botName: string;
  /** Channels the bot is not in (mutable; conversations.join removes). */
  readonly notInChannel: Set<string>;
  /** Channels that answer channel_not_found (mutable). */
  readonly unknownChannels: Set<string>;
  /** Granted scopes (mutable) or undefined for no scope checks. */
  readonly scopes: Set<string> | undefined;
  readonly calls: RecordedCall[] = [];
  readonly validationErrors: ValidationFailure[] = [];
  readonly responseUrlPosts: ResponseUrlPost[] = [];
  readonly assistantStatuses: AssistantStatus[];
  /** Number of calls answered 429 by tier enforcement. */
  rateLimited = 0;

  /**
   * The app's OAuth settings (client id and secret, redirect URLs, token rotation), mutable:
   * installs go through GET /oauth/v2/authorize and oauth.v2.access.
   */
  readonly oauth: LocalOAuth;

  readonly #state: Workspace;
  readonly #tenancy: Tenancy;
  readonly #faults = new Faults();
  readonly #tiers: RateTiers;
  readonly #dispatcher: Dispatcher;
  readonly #server: Server;
  readonly #defaultTimeout: number;
  readonly #closeListeners = new Set<(error: Error) => void>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #port = 0;
  #closed = false;
  readonly #publicHost: string;

  constructor(options: LocalSlackOptions = {}) {
    super();
    this.setMaxListeners(0);
    const state = new Workspace(options);
    this.#state = state;
    this.botToken = state.botToken;
    this.appToken = state.appToken;
    this.teamId = state.teamId;
    this.teamName = state.teamName;
    this.appId = state.appId;
    this.botUserId = state.botUserId;
    this.botId = state.botId;
    this.botName = state.botName;
    this.notInChannel = state.notInChannel;
    this.unknownChannels = state.unknownChannels;
    this.assistantStatuses = state.assistantStatuses;
    this.scopes = options.scopes === undefined ? undefined : new Set(options.scopes);
    const now = options.now ?? Date.now;
    this.#tenancy = new Tenancy(state, now);
    this.oauth = new LocalOAuth(this.#tenancy, state.appId, now, options.oauth);
    this.#tiers = new RateTiers(options.tiers ?? {}, now);
    this.#defaultTimeout = options.defaultWaitTimeoutMs ?? 5_000;
    this.#publicHost = options.publicHost ?? "127.0.0.1";
    this.#dispatcher = {
      registry: buildRegistry(METHOD_FAMILIES),
      context: {
        state,
        tenancy: this.#tenancy,
        oauth: this.oauth,
        uninstall: (id) => {
          // Slack answers the call, then tells the app.
          void this.uninstall(id).catch((error: unknown) => {
            this.deliveryFailures.push(String(error));
          });
        },
        codes: { ...DEFAULT_ERROR_CODES, ...options.errorCodes },
        now,
      },
      faults: this.#faults,
      tiers: this.#tiers,
      scopes: this.scopes,
    };
    const host = this.#routeHost();
    this.#server = createServer((req, res) => {
      route(host, req, res).catch((error: unknown) => {
        if (!res.headersSent) {
          sendJson(res, 500, { ok: false, error: "internal_error", detail: String(error) });
        } else {
          res.destroy();
        }
      });
    });
  }

  /** Starts listening on 127.0.0.1:<ephemeral>. Use startLocalSlack() instead. */
  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(0, "127.0.0.1", () => {
        this.#server.off("error", reject);
        resolve();
      });
    });
    this.#port = (this.#server.address() as AddressInfo).port;
    this.#state.baseUrl = this.publicUrl;
  }

  get port(): number {
    return this.#port;
  }

  /** Base URL of the server, with trailing slash: `http://127.0.0.1:PORT/`. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}/`;
  }

  /** The base URL as clients reach it (`publicHost`), with trailing slash. */
  get publicUrl(): string {
    return `http://${this.#publicHost}:${this.#port}/`;
  }

  /** What to pass as `slackApiUrl`: `http://127.0.0.1:PORT/api/`. */
  get apiUrl(): string {
    return `${this.url}api/`;
  }

  /** The workspace URL auth.test reports; permalinks are built from it. */
  get teamUrl(): string {
    return this.#state.teamUrl;
  }

  /**
   * Where the app's events go when Slack sends them by itself (an `apps.uninstall`), set by
   * the test: the app's HTTP receiver, or its Socket Mode connection.
   */
  eventDestination: EventDestination | undefined;
  /** Events Slack sent by itself that the app did not acknowledge (why, one line each). */
  readonly deliveryFailures: string[] = [];

  /**
   * Uninstalls the app from a workspace (or, org-wide, an organisation), as an admin does in
   * Slack: its bot tokens answer `token_revoked` from now on, and `app_uninstalled` and
   * `tokens_revoked` are sent to the app (to `to`, else `eventDestination`; when neither is
   * set, nothing is sent and the caller delivers the events returned).
   */
  async uninstall(
    id: string,
    to: EventDestination | undefined = this.eventDestination,
  ): Promise<EventInput[]> {
    const events = uninstallEvents(this.#tenancy, this.appId, id);
    this.emit("change");
    if (to) await deliverEvents(events, to);
    return events;
  }

  /**
   * Someone deletes a message in Slack: it is gone from its channel, and `message_deleted` is
   * sent to the app (to `to`, else `eventDestination`; neither: returned for the caller).
   */
  async deleteMessage(
    channel: string,
    ts: string,
    to: EventDestination | undefined = this.eventDestination,
  ): Promise<EventInput> {
    const message = this.#state.messages.get(channel)?.get(ts);
    if (!message || message.deleted) throw new Error(`local-slack: no message ${channel}/${ts}`);
    message.deleted = true;
    const event = messageDeletedEvent(this.teamId, this.appId, message, this.#state.nextTs());
    this.emit("change");
    if (to) await deliverEvents([event], to);
    return event;
  }

  /** A channel is deleted: its messages go, and `channel_deleted` (`group_deleted`) is sent. */
  async deleteChannel(
    channel: string,
    to: EventDestination | undefined = this.eventDestination,
  ): Promise<EventInput> {
    for (const message of this.#state.messages.get(channel)?.values() ?? []) message.deleted = true;
    this.unknownChannels.add(channel);
    const event = channelDeletedEvent(this.teamId, this.appId, channel);
    this.emit("change");
    if (to) await deliverEvents([event], to);
    return event;
  }

  /**
   * Runs one of the app's Workflow Builder steps, as a workflow reaching it does: a new
   * execution (running until the app calls functions.completeSuccess or functions.completeError,
   * once), with a token of its own that the app must complete it with, and the
   * `function_executed` event Slack sends then. The event goes to `to` (else
   * `eventDestination`); with neither, nothing is sent and the caller delivers `event`.
   */
  async executeFunction(
    step: { callbackId: string; inputs?: Record<string, unknown>; team?: string },
    to: EventDestination | undefined = this.eventDestination,
  ): Promise<{ id: string; token: string; event: EventInput }> {
    const { id, token, event } = functionExecution(this.#state, this.#tenancy, step);
    this.emit("change");
    if (to) await deliverEvents([event], to);
    return { id, token, event };
  }

  /** An execution of a step as it stands (running, completed with outputs, failed with an error). */
  execution(id: string): FunctionExecution | undefined {
    const execution = this.#state.executions.get(id);
    return execution && clone(execution);
  }

  /** Every execution of the app's steps, oldest first. */
  executions(): FunctionExecution[] {
    return [...this.#state.executions.values()].map((e) => clone(e));
  }

  /** Where `apps.connections.open` sends a Socket Mode client (set by the test). */
  get socketModeUrl(): string | undefined {
    return this.#state.socketModeUrl;
  }

  set socketModeUrl(url: string | undefined) {
    this.#state.socketModeUrl = url;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const error = new Error("LocalSlack was closed");
    for (const listener of [...this.#closeListeners]) listener(error);
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  // Test API: configuration, fault injection and seeding -------------------------------------------

  addUser(user: SlackUser): void {
    this.#state.addUser(user);
  }

  /**
   * A user group (`@handle`) of a workspace (the double's own by default), with its members;
   * returns its id (`S…`). `usergroups.list` and `usergroups.users.list` answer with it.
   */
  addUserGroup(group: {
    handle: string;
    users: readonly string[];
    name?: string;
    id?: string;
    teamId?: string;
    disabled?: boolean;
  }): string {
    const id = group.id ?? `S${String(this.#state.userGroups.size + 1).padStart(8, "0")}`;
    const stored: UserGroup = {
      id,
      teamId: group.teamId ?? this.teamId,
      handle: group.handle,
      name: group.name ?? group.handle,
      users: [...group.users],
      disabled: group.disabled ?? false,
    };
    this.#state.userGroups.set(id, stored);
    return id;
  }

  /**
   * Who is in a channel besides the bot (conversations.members); a channel no test set has
   * every user of the workspace in it.
   */
  setChannelMembers(channel: string, users: readonly string[]): void {
    this.#state.channelMembers.set(channel, new Set(users));
  }

  /** Changes a user group's members (as usergroups.users.update does). */
  setUserGroupMembers(id: string, users: readonly string[]): void {
    const group = this.#state.userGroups.get(id);
    if (!group) throw new Error(`local-slack: no user group ${id}`);
    group.users = [...users];
  }

  /**
   * Another workspace, with its own bot user and bot token. Its token works once the app is
   * installed there through OAuth (or at once with `installed: true`). Channels, messages and
   * users stay one shared space (Slack's ids are unique across workspaces).
   */
  addTeam(team: TeamOptions): LocalTeam {
    return this.#tenancy.addTeam(team);
  }

  /** An Enterprise Grid organisation, where the app can be installed org-wide. */
  addEnterprise(enterprise: EnterpriseOptions): LocalEnterprise {
    return this.#tenancy.addEnterprise(enterprise);
  }

  /** A workspace the double knows (its own, or one added), with its bot and bot token. */
  team(id: string): LocalTeam {
    const team = this.#tenancy.teams.get(id);
    if (!team) throw new Error(`local-slack: no workspace ${id}`);
    return team;
  }

  /** The bot tokens that work for a workspace (or organisation), in the order they were issued. */
  tokensOf(teamOrEnterpriseId: string): string[] {
    return this.#tenancy.tokensOf(teamOrEnterpriseId);
  }

  /** Make the next `times` calls of `method` fail with `spec` (before any side effect). */
  failNext(method: string, options: FailNextOptions): void {
    this.#faults.failNext(method, options);
  }

  /** Fail every call for which `predicate` returns a fault. Returns a function that removes it. */
  failWhen(predicate: FaultPredicate): () => void {
    return this.#faults.failWhen(predicate);
  }

  /** Sets (or with undefined removes) a rate tier for a method. */
  setTier(method: string, tier: RateTier | undefined): void {
    this.#tiers.set(method, tier);
  }

  /**
   * How long a native stream stays open after chat.startStream (`streamLifetimeMs` option,
   * default five minutes like Slack; `Infinity` = until stopped). Changing it applies to the
   * streams already open too: their age is counted from their start.
   */
  get streamLifetimeMs(): number {
    return this.#state.streamLifetimeMs;
  }

  set streamLifetimeMs(ms: number) {
    this.#state.streamLifetimeMs = ms;
    this.emit("change");
  }

  /**
   * Ends a native stream now, as Slack does when its lifetime is over or when a person presses
   * the stop control on it: the next chat.appendStream / chat.stopStream fails with `error`
   * (default `message_not_in_streaming_state`; "stopped_by_user" for the stop control, or use
   * `stopStreamByUser`). chat.update on the same ts keeps working.
   */
  expireStream(
    channel: string,
    ts: string,
    error: "message_not_in_streaming_state" | "stopped_by_user" = "message_not_in_streaming_state",
  ): void {
    const message = this.#state.messages.get(channel)?.get(ts);
    if (!message || message.streaming_state === undefined) {
      throw new Error(`expireStream: no streamed message ${channel}/${ts}`);
    }
    message.streaming_state = "ended";
    message.streamEndError = error;
    this.emit("change");
  }

  /** A person pressed Slack's stop control on a streaming message (`stopped_by_user`). */
  stopStreamByUser(channel: string, ts: string): void {
    this.expireStream(channel, ts, "stopped_by_user");
  }

  /** The streams still open (in a channel, or everywhere), oldest first. */
  openStreams(channel?: string): SlackMessage[] {
    const channels = channel === undefined ? [...this.#state.messages.keys()] : [channel];
    return channels
      .flatMap((c) => this.#state.live(c))
      .map((m) => this.#state.snapshot(m))
      .filter((m) => m.streaming_state === "in_progress")
      .sort((a, b) => Number.parseFloat(a.ts) - Number.parseFloat(b.ts));
  }

  /** Seeds a message written by a person (e.g. the message that opened a thread). Returns its ts. */
  addMessage(message: {
    channel: string;
    user: string;
    text: string;
    thread_ts?: string;
    ts?: string;
    /** Ids of files the person attached (`addUserFile`'s). */
    files?: string[];
  }): string {
    const ts = message.ts ?? this.#state.nextTs();
    this.#state.store({
      channel: message.channel,
      ts,
      user: message.user,
      text: message.text,
      ...(message.thread_ts === undefined ? {} : { thread_ts: message.thread_ts }),
      ...(message.files === undefined ? {} : { files: message.files }),
    });
    this.emit("change");
    return ts;
  }

  /**
   * Registers a file uploaded by a person, served at `url_private_download` like files.slack.com:
   * with `Authorization: Bearer <bot token>` it returns the bytes, without (or with a wrong token) it
   * returns Slack's HTML sign-in page with status 200 - the classic "downloaded the login page" bug.
   */
  addUserFile(file: { name: string; bytes: Buffer | string; mimetype?: string }): {
    id: string;
    name: string;
    mimetype: string;
    size: number;
    url_private: string;
    url_private_download: string;
  } {
    const id = this.#state.nextFileId();
    const bytes = Buffer.isBuffer(file.bytes) ? file.bytes : Buffer.from(file.bytes);
    const mimetype = file.mimetype ?? "application/octet-stream";
    this.#state.userFiles.set(id, { id, name: file.name, bytes, mimetype });
    const url = this.#state.filePrivateUrl(id, file.name);
    const download = `${url}?download=1`;
    return {
      id,
      name: file.name,
      mimetype,
      size: bytes.length,
      url_private: url,
      url_private_download: download,
    };
  }

  /** A response_url served by this server; POSTs to it are recorded in `responseUrlPosts`. */
  responseUrl(id: string): string {
    return `${this.publicUrl}response-url/${encodeURIComponent(id)}`;
  }

  // Test API: state ---------------------------------------------------------------------------------

  /**
   * Messages of a channel in ts order. By default like conversations.history: top-level messages and
   * broadcast replies only; `{ includeReplies: true }` adds every thread reply.
   */
  messages(channel: string, options: { includeReplies?: boolean } = {}): SlackMessage[] {
    const messages = this.#state.channelMessages(channel, options.includeReplies === true);
    return messages.map((m) => this.#state.snapshot(m));
  }

  /** The thread's parent (if known) followed by its replies, in order, with their current content. */
  thread(channel: string, threadTs: string): SlackMessage[] {
    return this.#state.threadMessages(channel, threadTs).map((m) => this.#state.snapshot(m));
  }

  /**
   * What a thread shows, message by message in order (parent first): who wrote it and the text
   * a person reads (`visibleText`: markdown, section and header blocks, else the streamed or
   * plain text).
   */
  threadText(channel: string, threadTs: string): ThreadLine[] {
    return this.thread(channel, threadTs).map((m) => {
      const line: ThreadLine = {
        ts: m.ts,
        user: m.user,
        bot: m.bot_id !== undefined,
        text: visibleText(m),
        ...(m.streaming_state === undefined ? {} : { streaming_state: m.streaming_state }),
      };
      return line;
    });
  }

  /**
   * Calls per method (total, answered ok, answered 429), of one workspace when `team` is given
   * (the workspace its token belongs to), from call `fromIndex` on.
   */
  callCounts(options: { team?: string; fromIndex?: number } = {}): Record<string, CallCount> {
    return countCalls(this.calls, options);
  }

  /** One message's current content, or undefined (also when deleted). */
  message(channel: string, ts: string): SlackMessage | undefined {
    const m = this.#state.messages.get(channel)?.get(ts);
    return m && !m.deleted ? this.#state.snapshot(m) : undefined;
  }

  ephemerals(channel?: string, user?: string): SlackEphemeral[] {
    return this.#state.ephemerals
      .filter(
        (e) =>
          (channel === undefined || e.channel === channel) &&
          (user === undefined || e.user === user),
      )
      .map((e) => clone(e));
  }

  /** Every set of suggested prompts the app set (assistant.threads.setSuggestedPrompts). */
  suggestedPrompts(): SuggestedPrompts[] {
    return this.#state.suggestedPrompts.map((p) => clone(p));
  }

  /** The agent-view title of a thread (assistant.threads.setTitle), if set. */
  threadTitle(channel: string, threadTs: string): string | undefined {
    return this.#state.threadTitles.get(`${channel}/${threadTs}`);
  }

  /** Every agent session status the app set (agents.sessions.setStatus), oldest first. */
  sessionStatuses(): AgentSession[] {
    return this.#state.sessionHistory.map((s) => clone(s));
  }

  /** Views the app opened (views.open), oldest first, as Slack answered them. */
  views(): OpenedView[] {
    return this.#state.views.map((v) => clone(v));
  }

  /** Every App Home tab the app published for `user` (views.publish), oldest first. */
  homeTabs(user: string): OpenedView[] {
    return this.#state.homePublishes.filter((v) => v.user === user).map((v) => clone(v));
  }

  /** Files created through files.getUploadURLExternal, in creation order. */
  files(): SlackFile[] {
    return [...this.#state.files.values()].map((f) => ({
      ...f,
      bytes: Buffer.from(f.bytes),
      shares: f.shares.map((s) => ({ ...s })),
    }));
  }

  reactions(channel: string, ts: string): SlackReaction[] {
    const byName = this.#state.reactions.get(`${channel}/${ts}`);
    if (!byName) return [];
    return [...byName.entries()]
      .filter(([, users]) => users.size > 0)
      .map(([name, users]) => ({ name, users: [...users], count: users.size }));
  }

  /** The current assistant status of a thread ("" or undefined when cleared). */
  assistantStatus(channel: string, threadTs: string): string | undefined {
    return this.#state.currentStatus.get(`${channel}/${threadTs}`);
  }

  // Test API: waiting -------------------------------------------------------------------------------

  /**
   * Resolves with the first value `check` returns that is not undefined/null/false, re-evaluating after
   * every recorded call, response_url POST and test-API change. Never polls, never sleeps.
   */
  waitFor<T>(check: () => T | undefined | null | false, options: WaitOptions = {}): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.#defaultTimeout;
    return waitFor(this.#waitSource(), check, { ...options, timeoutMs });
  }

  /** Resolves with the first recorded call (already recorded or future) matching `predicate`. */
  waitForCall(
    predicate: (call: RecordedCall) => boolean,
    options: WaitOptions = {},
  ): Promise<RecordedCall> {
    const from = options.fromIndex ?? 0;
    return this.waitFor(() => this.calls.slice(from).find(predicate), {
      ...options,
      description: options.description ?? `waitForCall(${truncate(predicate.toString(), 200)})`,
    });
  }

  /** A readable list of the last `n` calls, for assertion messages. */
  describeRecentCalls(n = 20): string {
    return describeCalls(this.calls, n);
  }

  #waitSource(): WaitSource {
    return {
      events: this,
      closeListeners: this.#closeListeners,
      isClosed: () => this.#closed,
      describe: () => this.describeRecentCalls(),
    };
  }

  #routeHost(): RouteHost {
    return {
      state: this.#state,
      tenancy: this.#tenancy,
      oauth: this.oauth,
      notify: () => this.emit("change"),
      answerApi: (method, request) => answerApiCall(this.#dispatcher, method, request),
      recordCall: (method, request, at, outcome) => this.#recordCall(method, request, at, outcome),
      responseUrlUses: (id) =>
        this.responseUrlPosts.filter((p) => p.id === id && p.status === 200).length,
      recordResponseUrl: (post) => {
        this.responseUrlPosts.push(post);
        this.emit("response_url", post);
      },
    };
  }

  #recordCall(
    method: string,
    request: Pick<ApiRequest, "args" | "token">,
    at: number,
    outcome: ApiOutcome,
  ): void {
    const { status, response, retryAfter, fault, validation, caller } = outcome;
    const { args, token } = request;
    const call: RecordedCall = { seq: this.calls.length, method, args, at, status, response };
    if (token !== undefined) call.token = token;
    if (caller?.teamId !== undefined) call.team = caller.teamId;
    if (caller?.enterpriseId !== undefined) call.enterprise = caller.enterpriseId;
    if (retryAfter !== undefined) call.retryAfter = retryAfter;
    if (fault !== undefined) call.fault = fault;
    if (fault === "ratelimited") this.rateLimited += 1;
    if (validation !== undefined) {
      call.validationError = validation.error;
      const failure: ValidationFailure = {
        seq: call.seq,
        method,
        error: validation.error,
        message: validation.message,
        args,
        at,
      };
      if (validation.pointer !== undefined) failure.pointer = validation.pointer;
      this.validationErrors.push(failure);
    }
    this.calls.push(call);
    this.emit("call", call);
    if (method === "chat.startStream" && response.ok) this.#wakeAtStreamEnd();
  }

  /** A "change" when a stream's lifetime is over, so that waitFor re-checks then. */
  #wakeAtStreamEnd(): void {
    const ms = this.#state.streamLifetimeMs;
    // Beyond setTimeout's range (~24.8 days) no test waits that long.
    if (!(ms < 2 ** 31 - 1) || this.#closed) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!this.#closed) this.emit("change");
    }, ms + 1);
    timer.unref();
    this.#timers.add(timer);
  }
}

/** Starts a LocalSlack on 127.0.0.1:<ephemeral port>. Remember `await slack.close()`. */
export async function startLocalSlack(options: LocalSlackOptions = {}): Promise<LocalSlack> {
  const slack = new LocalSlack(options);
  await slack.listen();
  return slack;
}
