/** `npm run keys:reseal` (the same environment as `npm start`): prints counts, never a key. */
import { parseConfigOrExit } from "../config/config.ts";
import { describeReseal, NoEncryptionKeyError, resealStoredKeys } from "./reseal.ts";

const config = parseConfigOrExit(process.env);

try {
  const report = await resealStoredKeys(config);
  for (const line of describeReseal(report)) process.stdout.write(`${line}\n`);
} catch (err) {
  const why = err instanceof NoEncryptionKeyError ? err.message : `${String(err)}`;
  process.stderr.write(`Could not re-encrypt the keys: ${why}\n`);
  process.exit(1);
}
