/** `npm run playground`: starts the local playground and prints the one URL to open. */
import { portSettingOrExit } from "../../src/config-values.ts";
import { exitOnStartupError } from "../../src/util/startup-error.ts";
import { startPlayground } from "./server.ts";

const port = portSettingOrExit("PLAYGROUND_PORT", process.env.PLAYGROUND_PORT, 0);
// PLAYGROUND_HOST=0.0.0.0 in a container (docker-compose.yml's demo profile); 127.0.0.1 otherwise.
const host = process.env.PLAYGROUND_HOST || undefined;
const playground = await startPlayground({ port, ...(host ? { host } : {}) }).catch(
  (err: unknown) => exitOnStartupError(err, { PLAYGROUND_PORT: port }),
);
process.stdout.write(`Playground ready: ${playground.url}\n`);
const stop = () => {
  playground.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
