/** Recent tasks, and default options: personal (App Home) and a channel's (`/task settings`). */
import type { Logger } from "pino";
import type { DefaultsScope, RecentTask, RunState, TaskDefaults } from "../store/types.ts";
import { truncate } from "../view/sanitize.ts";
import { mergeOptions, OPTION_KEYS, type OptionKey, type TaskOptions } from "./options.ts";
import type { PreferenceStore, SlackWriter } from "./ports.ts";

/** How many recent tasks App Home lists, and how much of each prompt (characters). */
export const RECENT_TASKS_SHOWN = 20;
const PROMPT_EXCERPT = 150;

/** Who knows a channel's creator (Slack's conversations.info): its manager for settings. */
export interface ChannelDirectory {
  channelCreator(teamId: string, channelId: string): Promise<string | undefined>;
}

/** A default that a task used because nothing stronger set that option. */
export interface AppliedDefault {
  readonly key: OptionKey;
  readonly value: string | boolean;
  readonly from: "personal" | "channel";
}

export type TaskDefaultsUsed = Awaited<ReturnType<Preferences["forTask"]>>;

const DEFAULT_KEYS: readonly (keyof TaskDefaults)[] = ["model", "agent", "effort", "thinking"];

/** Only the fields a default may set (the context manager is chosen per task). */
export function asDefaults(options: TaskOptions): TaskDefaults {
  const out: Record<string, unknown> = {};
  for (const key of DEFAULT_KEYS) if (options[key] !== undefined) out[key] = options[key];
  return out as TaskDefaults;
}

interface PreferencesOptions {
  readonly store: PreferenceStore;
  readonly workspaces: { writer(teamId: string): Pick<SlackWriter, "isAdmin"> };
  readonly directory?: ChannelDirectory | undefined;
  /** Anyone may change a channel's defaults (`TASK_SETTINGS_ANYONE`). */
  readonly settingsAnyone?: boolean | undefined;
  readonly logger: Logger;
  readonly now: () => number;
}

export class Preferences {
  readonly #o: PreferencesOptions;
  /** This process's writes of each person's recent tasks, in order (a start before its end). */
  readonly #writes = new Map<string, Promise<void>>();

  constructor(options: PreferencesOptions) {
    this.#o = options;
  }

  recentTasks(teamId: string, userId: string): Promise<RecentTask[]> {
    return this.#o.store.recentTasks(teamId, userId, RECENT_TASKS_SHOWN);
  }

  async defaults(teamId: string, scope: DefaultsScope): Promise<TaskDefaults> {
    return (await this.#o.store.getDefaults(teamId, scope)) ?? {};
  }

  saveDefaults(teamId: string, scope: DefaultsScope, defaults: TaskOptions): Promise<void> {
    return this.#o.store.putDefaults(teamId, scope, asDefaults(defaults));
  }

  /** Anyone when allowed, else the channel's creator (its manager, per the Web API) or an admin. */
  async mayChangeChannel(teamId: string, channelId: string, userId: string): Promise<boolean> {
    const { directory, logger } = this.#o;
    if (this.#o.settingsAnyone === true) return true;
    const creator = await directory
      ?.channelCreator(teamId, channelId)
      .catch((err: unknown) => void logger.warn({ err }, "could not read the channel's creator"));
    if (creator === userId) return true;
    const writer = this.#o.workspaces.writer(teamId);
    return writer.isAdmin(userId).catch((err: unknown) => {
      logger.warn({ err }, "could not check whether the user is an admin");
      return false;
    });
  }

  /** A task's options (`explicit` over personal defaults over the channel's); which filled gaps. */
  async forTask(teamId: string, userId: string, channelId: string, explicit: TaskOptions) {
    const [personal, channel] = await Promise.all([
      this.#o.store.getDefaults(teamId, { kind: "user", userId }),
      // A DM has no channel settings (`/task settings` is for channels).
      channelId.startsWith("D")
        ? undefined
        : this.#o.store.getDefaults(teamId, { kind: "channel", channelId }),
    ]);
    const applied: AppliedDefault[] = [];
    for (const key of OPTION_KEYS) {
      if (explicit[key] !== undefined) continue;
      const own = personal?.[key as keyof TaskDefaults];
      const theirs = channel?.[key as keyof TaskDefaults];
      if (own !== undefined) applied.push({ key, value: own, from: "personal" });
      else if (theirs !== undefined) applied.push({ key, value: theirs, from: "channel" });
    }
    return { options: mergeOptions(explicit, personal, channel), applied };
  }

  /** Lists a new task, running, in its owner's recent tasks; no task waits for it (a lock may). */
  taskStarted(
    teamId: string,
    userId: string,
    task: Omit<RecentTask, "status" | "updatedAt" | "prompt"> & { prompt: string },
  ): Promise<void> {
    const line = task.prompt.replace(/\s+/g, " ").trim();
    const prompt = truncate(line, PROMPT_EXCERPT); // never inside an emoji
    const listed: RecentTask = { ...task, prompt, status: "running", updatedAt: task.startedAt };
    return this.#inOrder(teamId, userId, "could not list the recent task", () =>
      this.#o.store.putRecentTask(teamId, userId, listed),
    );
  }

  /** A task's latest state (a run ended, a follow-up started); only logged if it fails. */
  taskState(
    teamId: string,
    userId: string,
    thread: { readonly channelId: string; readonly threadTs: string },
    status: RunState,
  ): Promise<void> {
    const now = this.#o.now();
    return this.#inOrder(teamId, userId, "could not update the recent task", () =>
      this.#o.store.updateRecentTask(teamId, userId, thread, (t) => ({
        ...t,
        status,
        updatedAt: now,
      })),
    );
  }

  /** Runs one write of a person's list after this process's earlier ones; never rejects. */
  #inOrder(teamId: string, userId: string, failed: string, write: () => Promise<void>) {
    const key = `${teamId}/${userId}`;
    const next = (this.#writes.get(key) ?? Promise.resolve())
      .then(write)
      .catch((err: unknown) => this.#o.logger.warn({ err }, failed));
    this.#writes.set(key, next);
    void next.finally(() => {
      if (this.#writes.get(key) === next) this.#writes.delete(key);
    });
    return next;
  }
}
