/**
 * `npm run playground`: starts the local playground and prints the one URL to open. Answers come
 * from the service simulator, or from a real Task service with TASK_API_URL and TASK_API_KEY.
 */
import { portSettingOrExit } from "../../src/config/values.ts";
import { exitOnStartupError } from "../../src/util/startup-error.ts";
import { startPlayground } from "./server.ts";

const port = portSettingOrExit("PLAYGROUND_PORT", process.env.PLAYGROUND_PORT, 0);
// PLAYGROUND_HOST=0.0.0.0 in a container (docker-compose.yml's demo profile); 127.0.0.1 otherwise.
const host = process.env.PLAYGROUND_HOST || undefined;
const serviceUrl = process.env.TASK_API_URL?.trim() || undefined;
const apiKey = process.env.TASK_API_KEY?.trim() || undefined;
if (
  (serviceUrl === undefined) !== (apiKey === undefined) ||
  (serviceUrl && !URL.canParse(serviceUrl))
) {
  process.stderr.write(
    "To use a real Task service, set both TASK_API_URL (its http(s) URL) and TASK_API_KEY; unset both for the simulator.\n",
  );
  process.exit(1);
}
const playground = await startPlayground({
  port,
  ...(host ? { host } : {}),
  ...(serviceUrl && apiKey ? { service: { url: serviceUrl, apiKey } } : {}),
  // Generated pages are previewed when a Chromium is on PATH (or at CHROMIUM_PATH); as root,
  // only with PREVIEW_ALLOW_NO_SANDBOX=1 (Chromium's sandbox cannot work there).
  browser: {
    PATH: process.env.PATH ?? "",
    ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
    ...(process.env.PREVIEW_ALLOW_NO_SANDBOX
      ? { PREVIEW_ALLOW_NO_SANDBOX: process.env.PREVIEW_ALLOW_NO_SANDBOX }
      : {}),
  },
}).catch((err: unknown) => exitOnStartupError(err, { PLAYGROUND_PORT: port }));
process.stdout.write(`Playground ready: ${playground.url}\n`);
const stop = () => {
  playground.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
