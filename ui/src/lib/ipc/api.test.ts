import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const invoke = vi.fn(async (..._args: unknown[]): Promise<unknown> => undefined);
vi.mock('@tauri-apps/api/core', () => ({
  invoke: (...args: unknown[]) => invoke(...args),
  Channel: class {
    onmessage: (m: unknown) => void = () => {};
  },
}));

const { tauriBackend } = await import('./api');
const { COMMAND_NAMES, methodName } = await import('./backend');

describe('the Tauri backend derived from the generated command list', () => {
  beforeEach(() => {
    (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__ = {};
    invoke.mockClear();
  });
  afterEach(() => {
    delete (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__;
  });

  it('has one method per command', () => {
    expect(Object.keys(tauriBackend).sort()).toEqual(COMMAND_NAMES.map(methodName).sort());
  });

  it('sends positional arguments under the keys the shell reads, in declaration order', async () => {
    await tauriBackend.olderMessages('c_1', 'm_9', 20);
    expect(invoke).toHaveBeenLastCalledWith('older_messages', { id: 'c_1', before: 'm_9', limit: 20 });
    await tauriBackend.duplicateAgent('a', 'b');
    expect(invoke).toHaveBeenLastCalledWith('duplicate_agent', { name: 'a', newName: 'b' });
  });

  it('sends a left-out optional argument as null', async () => {
    await tauriBackend.listTools('c_1');
    expect(invoke).toHaveBeenLastCalledWith('list_tools', { conversationId: 'c_1', agent: null });
  });

  it("turns a turn's handlers into its event channel", async () => {
    const onEvent = vi.fn();
    await tauriBackend.regenerate('c_1', null, null, { onEvent });
    const [cmd, args] = invoke.mock.calls.at(-1) as [string, { conversationId: string; messageId: null; choices: null; onEvent: { onmessage: (m: unknown) => void } }];
    expect(cmd).toBe('regenerate');
    expect(args.conversationId).toBe('c_1');
    expect(args.messageId).toBeNull();
    expect(args.choices).toBeNull();
    args.onEvent.onmessage({ type: 'done' });
    expect(onEvent).toHaveBeenCalledWith({ type: 'done' });
  });

  it('refuses a link the UI would not have made before asking the shell', async () => {
    await expect(tauriBackend.openUrl('javascript:alert(1)')).rejects.toMatchObject({ message: 'This link cannot be opened.' });
    expect(invoke).not.toHaveBeenCalled();
    await tauriBackend.openUrl('https://example.com/');
    expect(invoke).toHaveBeenLastCalledWith('open_url', { url: 'https://example.com/' });
  });
});
