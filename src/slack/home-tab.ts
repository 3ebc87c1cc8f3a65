/** A person's App Home tab (`views.publish`): at once when asked, else at most once an interval. */
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import type { HomeRefresher } from "../threads/ports.ts";
import type { Preferences } from "../threads/preferences.ts";
import { type Clock, systemClock } from "../util/clock.ts";
import { renderHome } from "../view/home.ts";
import type { AdminHome } from "../view/usage-policy.ts";
import type { BotTokens } from "./workspace-tokens.ts";

interface HomeTabOptions {
  readonly client: Pick<WebClient, "views">;
  readonly tokens: Pick<BotTokens, "botToken">;
  readonly preferences: Preferences;
  readonly logger: Logger;
  readonly teamUrl?: ((teamId: string) => Promise<string | undefined>) | undefined;
  readonly clock?: Clock;
  /** At most one background refresh per person per this long (10 s). */
  readonly intervalMs?: number;
  readonly admin?: (teamId: string, userId: string) => Promise<AdminHome | undefined>;
  /** DATA_RETENTION_DAYS, as the tab tells people. */
  readonly retentionDays?: number | undefined;
}

/** `last`: when the last background refresh was published. */
type Pending = { last: number; timer?: unknown };

export class HomeTab implements HomeRefresher {
  readonly #o: HomeTabOptions;
  readonly #clock: Clock;
  readonly #interval: number;
  readonly #users = new Map<string, Pending>();
  #closed = false;

  constructor(options: HomeTabOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#interval = options.intervalMs ?? 10_000;
  }

  /** Now; a failure is logged. */
  async publish(teamId: string, userId: string): Promise<void> {
    try {
      const preferences = this.#o.preferences;
      const [tasks, defaults, teamUrl, token, admin] = await Promise.all([
        preferences.recentTasks(teamId, userId),
        preferences.defaults(teamId, { kind: "user", userId }),
        this.#o.teamUrl?.(teamId),
        this.#o.tokens.botToken(teamId),
        // None when it cannot be told: the rest of the tab is shown anyway.
        this.#o.admin?.(teamId, userId).catch((err: unknown) => {
          this.#o.logger.warn({ err }, "could not tell whether a person administers the workspace");
          return undefined;
        }),
      ]);
      const { retentionDays } = this.#o;
      const view = renderHome({ tasks, defaults, teamUrl, admin, retentionDays });
      await this.#o.client.views.publish({ token, user_id: userId, view: view as never });
    } catch (err) {
      this.#o.logger.warn({ err }, "could not publish the App Home tab");
    }
  }

  /** One of the person's tasks changed: publish now, or once the interval since the last is over. */
  taskChanged(teamId: string, userId: string): void {
    if (this.#closed) return;
    const key = `${teamId}/${userId}`;
    const pending = this.#users.get(key) ?? { last: Number.NEGATIVE_INFINITY };
    this.#users.set(key, pending);
    if (pending.timer !== undefined) return; // coalesced into the publish already planned
    const wait = pending.last + this.#interval - this.#clock.now();
    const go = () => {
      pending.timer = undefined;
      pending.last = this.#clock.now();
      void this.publish(teamId, userId).finally(() => this.#forget(key, pending));
    };
    if (wait <= 0) go();
    else pending.timer = this.#clock.setTimeout(go, wait);
  }

  /** Drops a person's entry once its interval is over and nothing is planned (bounded memory). */
  #forget(key: string, pending: Pending): void {
    this.#clock.setTimeout(() => {
      if (pending.timer === undefined && this.#users.get(key) === pending) this.#users.delete(key);
    }, this.#interval);
  }

  close(): void {
    this.#closed = true;
    for (const pending of this.#users.values()) {
      if (pending.timer !== undefined) this.#clock.clearTimeout(pending.timer);
    }
    this.#users.clear();
  }
}
