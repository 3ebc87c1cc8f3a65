/** Byte counts for people: "3.2 MB", "512 B". */
const KB = 1024;
const MB = 1024 * KB;

export const formatBytes = (n: number): string =>
  n >= MB ? `${(n / MB).toFixed(1)} MB` : n >= KB ? `${(n / KB).toFixed(1)} KB` : `${n} B`;
