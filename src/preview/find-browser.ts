/** Where the Chromium to drive is: CHROMIUM_PATH, else the usual names on PATH. Nothing is downloaded. */
import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";

/** Debian's, Ubuntu's (older) and Google's names for the browser. */
const BROWSER_NAMES = [
  "chromium",
  "chromium-browser",
  "google-chrome",
  "google-chrome-stable",
] as const;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A CHROMIUM_PATH that is not an executable file is reported, not replaced by another browser. */
export function findBrowser(
  setting: string | undefined,
  searchPath: readonly string[],
  isExecutable: (path: string) => boolean = executable,
): { path: string } | { missing: string } {
  if (setting !== undefined) {
    return isExecutable(setting)
      ? { path: setting }
      : { missing: `CHROMIUM_PATH (${setting}) is not an executable file` };
  }
  for (const dir of searchPath) {
    for (const name of BROWSER_NAMES) {
      const path = join(dir, name);
      if (isExecutable(path)) return { path };
    }
  }
  return {
    missing: `no ${BROWSER_NAMES.join(", ")} on PATH (set CHROMIUM_PATH, or build the image with WITH_CHROMIUM=1)`,
  };
}
