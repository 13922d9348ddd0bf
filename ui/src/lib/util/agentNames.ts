/** Names of agents and toolsets, checked as the service checks them (`agents::check_name`). */
import { AGENT_NAME_MAX } from '../ipc/bindings';

/** A letter, then letters, digits, - or _; at most `AGENT_NAME_MAX` in all. */
export const AGENT_NAME_RE = new RegExp(`^[A-Za-z][A-Za-z0-9_-]{0,${AGENT_NAME_MAX - 1}}$`);

/** What a name that fails `AGENT_NAME_RE` should be. */
export const AGENT_NAME_RULE = `Start with a letter, then letters, digits, - or _ (at most ${AGENT_NAME_MAX}).`;
