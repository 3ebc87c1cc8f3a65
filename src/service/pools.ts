/** Streams, long polls and reads: long-lived keep-alive, room for many concurrent streams. */
export const SERVICE_POOL = {
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
  connections: 256,
};

/** Create, continue and stop: few, short requests that must never queue. */
export const CONTROL_POOL = {
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
  connections: 32,
};
