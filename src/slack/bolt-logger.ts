/** Bolt and the WebClient log through pino, so redaction covers their lines too. */
import { LogLevel, type Logger as SlackLogger } from "@slack/logger";
import type { Logger } from "pino";

/** Bolt's warning for an unauthorized event, naming no workspace: the app's error handler does. */
const AUTHORIZATION_NOTICE = "Authorization of incoming event did not succeed.";

export function boltLogger(base: Logger): SlackLogger {
  let logger = base.child({ component: "bolt" });
  let level = LogLevel.INFO;
  const line = (msg: unknown[]) =>
    msg.map((m) => (typeof m === "string" ? m : JSON.stringify(m))).join(" ");
  return {
    debug: (...msg: unknown[]) => logger.debug(line(msg)),
    info: (...msg: unknown[]) => logger.info(line(msg)),
    warn: (...msg: unknown[]) => {
      const text = line(msg);
      if (!text.startsWith(AUTHORIZATION_NOTICE)) logger.warn(text);
    },
    error: (...msg: unknown[]) => logger.error(line(msg)),
    setLevel: (l: LogLevel) => {
      level = l;
      // Bolt's INFO is chatty about connections: pino's level (named alike) is the ceiling.
      if (base.isLevelEnabled(l)) logger.level = l;
    },
    getLevel: () => level,
    setName: (name: string) => {
      logger = base.child({ component: name });
    },
  };
}
