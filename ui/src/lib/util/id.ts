let n = 0;

/** A process-unique key for things the UI creates before the store names them. */
export function uid(prefix = 'k'): string {
  n += 1;
  return `${prefix}${n.toString(36)}`;
}
