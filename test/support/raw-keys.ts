/**
 * Every raw key of an app's store, read from the backend itself (the embedded SQLite file, or
 * Redis by SCAN, hash fields listed as `<hash> <field>`), with its value: what a test reads to
 * prove what is, or is not, kept.
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { createClient } from "@redis/client";

export async function rawKeys(app: {
  readonly namespace: string;
  readonly dataDir: string;
  readonly redisUrl: string | undefined;
}): Promise<Map<string, string>> {
  return app.redisUrl
    ? rawRedisKeys(app.redisUrl, app.namespace)
    : rawSqliteKeys(join(app.dataDir, "taskbot.sqlite"), app.namespace);
}

/** Every key under `ns` in an embedded store's SQLite file, with its value. */
export function rawSqliteKeys(path: string, ns: string): Map<string, string> {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const rows = db
      .prepare("SELECT key, value FROM keyv WHERE substr(key, 1, ?) = ?")
      .all(ns.length + 1, `${ns}:`) as Array<{ key: string; value: string }>;
    return new Map(rows.map((r) => [r.key, r.value]));
  } finally {
    db.close();
  }
}

/** Every key under `ns` in Redis (found by SCAN), each field of a hash as a key of its own. */
export async function rawRedisKeys(url: string, ns: string): Promise<Map<string, string>> {
  const client = createClient({ url });
  await client.connect();
  try {
    const raw = new Map<string, string>();
    for await (const keys of client.scanIterator({ MATCH: `${ns}:*`, COUNT: 100 })) {
      for (const key of keys) {
        const type = await client.type(key);
        if (type === "hash") {
          for (const [f, v] of Object.entries(await client.hGetAll(key))) raw.set(`${key} ${f}`, v);
        } else raw.set(key, type === "string" ? ((await client.get(key)) ?? "") : `(${type})`);
      }
    }
    return raw;
  } finally {
    await client.close();
  }
}

/** The entries that mention any of `ids` in their key or value. */
export function mentioning(raw: Map<string, string>, ...ids: string[]): Map<string, string> {
  return new Map([...raw].filter(([k, v]) => ids.some((id) => k.includes(id) || v.includes(id))));
}
