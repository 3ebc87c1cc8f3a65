const KEEP_ALIVE = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000 };

/** Streams, long polls and reads: room for many concurrent streams. */
export const SERVICE_POOL = { ...KEEP_ALIVE, connections: 256 };

/** Create, continue and stop: few, short requests that must never queue. */
export const CONTROL_POOL = { ...KEEP_ALIVE, connections: 32 };
