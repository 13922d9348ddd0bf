/**
 * Who writes a chat's summaries: the parameters dialog offers "This chat's model" and the
 * profiles' models, saves a pick (and taking it back) into the chat's setup, and the fake keeps
 * it like the service (a profile that does not exist is refused).
 */
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { ChatParamsStore } from '../src/lib/state/chatParams.svelte';

const MODELS = [
  { provider: 'openai', label: 'openai (default)', models: ['gpt-4o', 'gpt-4o-mini'] },
  { provider: 'ollama', label: 'ollama', models: ['llama3.2'] },
];

describe("the model that writes a chat's summaries", () => {
  it("is the chat's own until one is picked, and the pick is saved into the chat's setup", async () => {
    const { default: ChatParamsDialog } = await import('../src/lib/components/ChatParamsDialog.svelte');
    const setChatSetup = vi.fn(async () => ({ toolsets: [] }));
    const store = new ChatParamsStore({ setChatSetup });
    const onclose = vi.fn();
    render(ChatParamsDialog, { props: { conversationId: 'c1', title: 'Chat', store, models: MODELS, onclose } });
    const select = screen.getByTestId('chat-summariser') as HTMLSelectElement;
    expect(select.selectedOptions[0]?.textContent).toBe("This chat's model");
    expect([...select.options].map((o) => o.textContent)).toEqual(["This chat's model", 'openai / gpt-4o', 'openai / gpt-4o-mini', 'ollama / llama3.2']);
    expect(screen.getByTestId('chat-summariser-note').textContent).toContain('its own model');
    await fireEvent.change(select, { target: { value: 'ollama\u0000llama3.2' } });
    expect(screen.getByTestId('chat-summariser-note').textContent).toContain('this model');
    await fireEvent.click(screen.getByTestId('chat-params-save'));
    await waitFor(() => expect(onclose).toHaveBeenCalled());
    expect(setChatSetup).toHaveBeenCalledWith('c1', { summariser: { kind: 'pick', provider: 'ollama', model: 'llama3.2' } });
    expect(store.summariser('c1')).toEqual({ provider: 'ollama', model: 'llama3.2' });
  });

  it('shows a saved pick, saves nothing when unchanged, and "Clear all" gives it back to the chat', async () => {
    const { default: ChatParamsDialog } = await import('../src/lib/components/ChatParamsDialog.svelte');
    const setChatSetup = vi.fn(async () => ({ toolsets: [] }));
    const store = new ChatParamsStore({ setChatSetup });
    store.adoptSummariser('c1', { provider: 'openai', model: 'gpt-4o-mini' });
    const onclose = vi.fn();
    const { unmount } = render(ChatParamsDialog, { props: { conversationId: 'c1', store, models: MODELS, onclose } });
    expect((screen.getByTestId('chat-summariser') as HTMLSelectElement).value).toBe('openai\u0000gpt-4o-mini');
    await fireEvent.click(screen.getByTestId('chat-params-save'));
    await waitFor(() => expect(onclose).toHaveBeenCalledTimes(1));
    expect(setChatSetup).not.toHaveBeenCalledWith('c1', expect.objectContaining({ summariser: expect.anything() }));
    unmount();
    render(ChatParamsDialog, { props: { conversationId: 'c1', store, models: MODELS, onclose } });
    await fireEvent.click(screen.getByTestId('chat-params-reset'));
    await fireEvent.click(screen.getByTestId('chat-params-save'));
    await waitFor(() => expect(onclose).toHaveBeenCalledTimes(2));
    expect(setChatSetup).toHaveBeenCalledWith('c1', { summariser: { kind: 'chat' } });
    expect(store.summariser('c1')).toBeNull();
  });

  it('is kept by the fake like the service keeps it', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const [first] = await backend.listConversations();
    if (!first) throw new Error('the fake seeds conversations');
    const picked = await backend.setChatSetup(first.id, { summariser: { kind: 'pick', provider: 'ollama', model: 'llama3.2' } });
    expect(picked.summariser).toEqual({ provider: 'ollama', model: 'llama3.2' });
    expect((await backend.openConversation(first.id)).setup?.summariser).toEqual({ provider: 'ollama', model: 'llama3.2' });
    await expect(backend.setChatSetup(first.id, { summariser: { kind: 'pick', provider: 'ghost', model: 'm' } })).rejects.toMatchObject({ kind: 'notFound', message: "There is no provider profile named 'ghost' to write summaries." });
    const cleared = await backend.setChatSetup(first.id, { summariser: { kind: 'chat' } });
    expect(cleared.summariser).toBeUndefined();
  });
});
