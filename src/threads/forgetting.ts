/** What the app forgets when Slack deletes a message or channel, or someone erases records. */
import { forgetFeedback } from "../feedback/feedback.ts";
import type { CoordinatorDeps } from "./coordinator-deps.ts";

export const forgetting = (deps: CoordinatorDeps) => ({
  /** A task thread's root deleted forgets its task (its run stopped quietly); a waiting reply goes. */
  async messageDeleted(teamId: string, channelId: string, deletedTs: string, threadTs?: string) {
    const { store, relay, home, logger } = deps;
    const root = { teamId, channelId, threadTs: deletedTs };
    if (await store.getThread(root)) {
      await relay.stopQuietly(root, "its task message was deleted in Slack");
      const record = await store.forgetThread(root);
      await forgetFeedback(store, teamId, root);
      if (record) home.taskChanged(teamId, record.ownerUserId);
      logger.info({ team: teamId }, "a task message was deleted in Slack: its task is forgotten");
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
  },

  /** Every record of a deleted channel is forgotten, its runs stopped quietly. */
  async channelDeleted(teamId: string, channelId: string): Promise<void> {
    const { store, relay, home, logger } = deps;
    await relay.stopQuietly({ teamId, channelId }, "its channel was deleted in Slack");
    const people = await store.forgetChannel(teamId, channelId);
    await forgetFeedback(store, teamId, { channelId });
    for (const userId of people) home.taskChanged(teamId, userId);
    const said = "a channel was deleted in Slack: every record of it is forgotten";
    logger.info({ team: teamId, people: people.length }, said);
  },

  /** A person's records (App Home): threads, queue places, recents, defaults, votes; runs go on. */
  async erasePerson(teamId: string, userId: string) {
    const { store, logger } = deps;
    const forgotten = await store.forgetPerson(teamId, userId);
    const votes = await forgetFeedback(store, teamId, { voter: userId });
    logger.info({ team: teamId }, "a person erased their records");
    return { ...forgotten, votes };
  },

  /** What the workspace's people left (an admin, App Home): settings and audit trail stay. */
  async eraseWorkspace(teamId: string, adminId: string): Promise<void> {
    const { store, relay, audit, logger } = deps;
    await relay.stopQuietly({ teamId }, "an admin erased the workspace's records");
    await store.forgetPeople(teamId);
    await forgetFeedback(store, teamId, "all");
    await audit?.record({ what: "records.erased", who: adminId, workspace: teamId });
    logger.info({ team: teamId }, "an admin erased the workspace's records");
  },
});
