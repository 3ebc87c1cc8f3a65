import { type Logger, LogLevel } from "@slack/web-api";

/** WebClient logs Slack's `[ERROR]` response_metadata messages; keep expected failures quiet. */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  setLevel: () => {},
  getLevel: () => LogLevel.ERROR,
  setName: () => {},
};
