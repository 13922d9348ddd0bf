// The isolation hook (Tauri's isolation pattern): every IPC call the page makes arrives here, in a
// sandboxed frame of another origin, before it is encrypted for the shell with a key made at each
// start. The page's own script can neither reach this frame's variables nor skip it (the shell
// decrypts only what this frame encrypted), so a script injected into the page meets the same
// rules as the UI's own code:
// - the command is one the UI's generated contract knows (commands.js, generated from the
//   shell's source by src-tauri/tests/command_contract.rs), or the fetch of a turn's channel data;
// - its arguments are the declared keys only, plain data (strings, finite numbers, booleans,
//   null, arrays, plain objects), and bounded: each string, the whole call, the depth, the count.
// A call that breaks a rule is not sent as asked: it becomes `refused_call` with the command's
// name and the rule (never an argument), which the shell logs at warn and answers with an error,
// so the caller's promise rejects. Every call it lets through carries `CHECKED` = its command's
// name inside the encrypted arguments; the shell refuses an app command without it (a call that
// skipped this frame: Tauri does not decrypt an empty body) or with another command's name (an
// encrypted body replayed under another command).
'use strict';
(() => {
  const COMMANDS = Object.freeze(Object.assign(Object.create(null), SWITCHBOARD_COMMANDS));
  /** Tauri's own command a Channel uses to fetch a large message; it carries no arguments. */
  const CHANNEL_FETCH = 'plugin:__TAURI_CHANNEL__|fetch';
  const REFUSED = 'refused_call';
  /** The key the shell looks for (src-tauri/src/platform/refusals.rs, `CHECKED_KEY`). */
  const CHECKED = '__switchboardChecked';
  /**
   * A pasted message or an imported document's text is the largest argument the UI sends; an
   * attached file goes in slices of 64 KiB of bytes as base64 (a slice's cost on the window's
   * thread grows with its size), never whole.
   */
  const MAX_STRING_CHARS = 1 << 20;
  const MAX_TOTAL_CHARS = 2 << 20;
  const MAX_DEPTH = 8;
  const MAX_VALUES = 10000;
  const MAX_NAME_CHARS = 64;

  const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

  /** Why `value` is not bounded plain data, or null. `budget` counts characters and values. */
  function plain(value, path, depth, budget) {
    if (--budget.values < 0) return `more than ${MAX_VALUES} values`;
    // undefined: a field left out (JSON drops it).
    if (value === undefined || value === null || typeof value === 'boolean') return null;
    if (typeof value === 'number') return Number.isFinite(value) ? null : `${path} is not a finite number`;
    if (typeof value === 'string') {
      if (value.length > MAX_STRING_CHARS) return `${path} is longer than ${MAX_STRING_CHARS} characters`;
      budget.chars -= value.length;
      return budget.chars < 0 ? `the arguments are longer than ${MAX_TOTAL_CHARS} characters` : null;
    }
    if (typeof value !== 'object') return `${path} is a ${typeof value}, not plain data`;
    if (depth >= MAX_DEPTH) return `${path} is nested deeper than ${MAX_DEPTH}`;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const why = plain(value[i], `${path}[${i}]`, depth + 1, budget);
        if (why) return why;
      }
      return null;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return `${path} is not a plain object`;
    for (const key of Object.keys(value)) {
      budget.chars -= key.length;
      const why = plain(value[key], `${path}.${key.slice(0, MAX_NAME_CHARS)}`, depth + 1, budget);
      if (why) return why;
    }
    return null;
  }

  /** Why the call `cmd(args)` is refused, or null. */
  function refusal(cmd, args) {
    if (typeof cmd !== 'string') return 'the command name is not a string';
    if (cmd === CHANNEL_FETCH) {
      return args === undefined || args === null || (typeof args === 'object' && Object.keys(args).length === 0) ? null : 'unexpected arguments';
    }
    if (!own(COMMANDS, cmd)) return 'not a command of this app';
    if (args === undefined || args === null) return null;
    if (typeof args !== 'object' || Array.isArray(args) || ArrayBuffer.isView(args) || args instanceof ArrayBuffer) {
      return 'the arguments are not an object of named values';
    }
    const keys = COMMANDS[cmd];
    for (const key of Object.keys(args)) {
      if (!keys.includes(key)) return `unexpected argument \`${key.slice(0, MAX_NAME_CHARS)}\``;
    }
    return plain(args, 'argument', 0, { chars: MAX_TOTAL_CHARS, values: MAX_VALUES });
  }

  window.__TAURI_ISOLATION_HOOK__ = (message) => {
    let why;
    try {
      why = refusal(message.cmd, message.payload);
    } catch {
      why = 'the arguments could not be read';
    }
    if (why === null) {
      if (message.cmd !== CHANNEL_FETCH) message.payload = { ...(message.payload ?? {}), [CHECKED]: message.cmd };
      return message;
    }
    const name = typeof message.cmd === 'string' ? message.cmd.slice(0, MAX_NAME_CHARS) : '?';
    // The caller's own callbacks, so its promise rejects with the shell's answer; no headers.
    return { cmd: REFUSED, callback: message.callback, error: message.error, payload: { command: name, reason: why, [CHECKED]: REFUSED } };
  };
})();
