/** How a fake backend starts (tests and `npm run dev` pick these). */

export interface FakeOptions {
  /** Milliseconds between replayed events (0 in tests). */
  tickMs?: number;
  /** Start with no conversations. */
  empty?: boolean;
  /** Start with no provider profiles (the first-run screen). */
  noProviders?: boolean;
  /**
   * The keychain: "ok" works; "problem" cannot be used (keys come from the environment until the
   * person chooses); "pending" is still being probed and works after `probeMs`.
   */
  keychain?: 'ok' | 'problem' | 'pending';
  /** How long a "pending" keychain probe takes (default 1500 ms). */
  probeMs?: number;
  /** No local server answers (detect_local_servers finds none); by default LM Studio runs with 3 models. */
  noLocalServers?: boolean;
  /** Also a conversation of this many messages, an old one with a tool result to search for (./long.ts). */
  longChat?: number;
  /** What the fake native picker returns for the paperclip (name, bytes); default: a PNG, a Markdown file and a zip it refuses. */
  attachPicks?: [string, () => Uint8Array][];
}

/** Dev only: fake options from the page's query (`?providers=0`, `?keychain=problem|pending`). */
export function fakeOptionsFromUrl(search: string): FakeOptions {
  const params = new URLSearchParams(search);
  const keychain = params.get('keychain');
  return {
    noProviders: params.get('providers') === '0',
    keychain: keychain === 'problem' || keychain === 'pending' ? keychain : 'ok',
    noLocalServers: params.get('local') === '0',
    longChat: Math.min(5000, Number(params.get('long')) || 0),
  };
}

/** What the shell says when the keychain cannot be used (the Linux, no session bus case). */
export const FAKE_KEYCHAIN_PROBLEM =
  'The system keychain cannot be used: there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set and there is no bus socket at /run/user/1000/bus), ' +
  'and the Secret Service keychain is reached through it; this is usual over SSH, in containers and on servers. You can use environment variables instead ' +
  '(SWITCHBOARD_KEY_<NAME>, for example SWITCHBOARD_KEY_OPENAI or SWITCHBOARD_KEY_TAVILY), or keep keys in memory for this session only. Switchboard never writes keys to a file.';
