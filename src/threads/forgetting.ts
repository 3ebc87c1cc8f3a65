/**
 * What the app forgets, and when: a task thread whose message was deleted in Slack, a reply
 * deleted while it waited in a thread's queue, a deleted channel, a person's own records (erased
 * from App Home), a workspace's (erased by an admin). Runs still going there are stopped at the
 * service without a word to Slack (the relay's `stopQuietly`), then the records go, and whoever
 * lost a task from their recent tasks sees App Home again.
 */
import type { Logger } from "pino";
import { forgetFeedback } from "../feedback/feedback.ts";
import type { RunScope } from "../runs/relay.ts";
import type { AuditTrail } from "../store/audit.ts";
import type { PersonForgotten, SlackThreadKey } from "../store/types.ts";
import type { HomeRefresher, ThreadStore } from "./ports.ts";

export interface ForgettingDeps {
  readonly store: Pick<
    ThreadStore,
    | "getThread"
    | "updateThread"
    | "forgetThread"
    | "forgetChannel"
    | "forgetPerson"
    | "forgetPeople"
    | "recordKeys"
    | "getRecord"
    | "updateRecord"
    | "deleteRecord"
  >;
  readonly relay: { stopQuietly(scope: RunScope, why: string): Promise<void> };
  readonly home: HomeRefresher;
  /** Where an admin's erasing of the workspace's records is written. */
  readonly audit?: Pick<AuditTrail, "record"> | undefined;
  readonly logger: Logger;
}

/** What a person's erase removed: their records, and their votes on answers. */
export interface PersonErased extends PersonForgotten {
  readonly votes: number;
}

export class Forgetting {
  readonly #deps: ForgettingDeps;

  constructor(deps: ForgettingDeps) {
    this.#deps = deps;
  }

  /**
   * A message was deleted in Slack (`message_deleted`; `threadTs`: its thread, when Slack said).
   * The root of a task thread: the task is forgotten (its run stopped quietly, its record,
   * queued replies, votes and recent-task entry gone). A reply waiting in a task thread's queue:
   * it is not sent.
   */
  async messageDeleted(
    teamId: string,
    channelId: string,
    deletedTs: string,
    threadTs: string | undefined,
  ): Promise<void> {
    const { store, logger } = this.#deps;
    const root = { teamId, channelId, threadTs: deletedTs };
    if (await store.getThread(root)) {
      await this.#forgetThread(root);
      return;
    }
    if (threadTs === undefined || threadTs === deletedTs) return;
    let dropped = false;
    await store.updateThread({ teamId, channelId, threadTs }, (thread) => {
      const queue = thread.queue.filter((reply) => reply.ts !== deletedTs);
      dropped = queue.length < thread.queue.length;
      return dropped ? { ...thread, queue } : undefined;
    });
    if (dropped) logger.info({ team: teamId }, "a queued reply was deleted in Slack: not sent");
  }

  async #forgetThread(key: SlackThreadKey): Promise<void> {
    const { store, relay, home, logger } = this.#deps;
    await relay.stopQuietly(key, "its task message was deleted in Slack");
    const record = await store.forgetThread(key);
    await forgetFeedback(store, key.teamId, key);
    if (record) home.taskChanged(key.teamId, record.ownerUserId);
    logger.info({ team: key.teamId }, "a task message was deleted in Slack: its task is forgotten");
  }

  /** A channel was deleted in Slack: every record of it is forgotten, its runs stopped quietly. */
  async channelDeleted(teamId: string, channelId: string): Promise<void> {
    const { store, relay, home, logger } = this.#deps;
    await relay.stopQuietly({ teamId, channelId }, "its channel was deleted in Slack");
    const people = await store.forgetChannel(teamId, channelId);
    await forgetFeedback(store, teamId, { channelId });
    for (const userId of people) home.taskChanged(teamId, userId);
    logger.info(
      { team: teamId, people: people.length },
      "a channel was deleted in Slack: every record of it is forgotten",
    );
  }

  /**
   * A person erases their own records (App Home): the task threads they started, their replies
   * waiting in others' threads, their recent tasks, personal defaults and votes. Their runs
   * still going finish in Slack; the service's copy of their tasks is the service's.
   */
  async erasePerson(teamId: string, userId: string): Promise<PersonErased> {
    const { store, logger } = this.#deps;
    const forgotten = await store.forgetPerson(teamId, userId);
    const votes = await forgetFeedback(store, teamId, { voter: userId });
    logger.info({ team: teamId }, "a person erased their records");
    return { ...forgotten, votes };
  }

  /**
   * An admin erases what the workspace's people left (App Home): its runs stop quietly, then
   * every thread record, recent task, personal default and vote goes. Its settings and audit
   * trail stay; the erase is written to the trail.
   */
  async eraseWorkspace(teamId: string, adminId: string): Promise<void> {
    const { store, relay, audit, logger } = this.#deps;
    await relay.stopQuietly({ teamId }, "an admin erased the workspace's records");
    await store.forgetPeople(teamId);
    await forgetFeedback(store, teamId, "all");
    await audit?.record({ what: "records.erased", who: adminId, workspace: teamId });
    logger.info({ team: teamId }, "an admin erased the workspace's records");
  }
}
