/**
 * The model picker's lists: per provider, its models (a typed id that is the current choice kept in
 * its list), why its list could not be read, and the "Other model…" entry. Pure, for the picker and
 * for the "pick a model this server has" offers on a failed answer and a failed connection test.
 */
import type { ProviderInfo } from '../ipc/bindings';

/** The value of "Other model…" in a provider's group (no model id is empty). */
export const OTHER_MODEL = '\u0001other';

export interface PickerGroup {
  provider: string;
  label: string;
  models: string[];
  error: string | null;
}

export function pickerGroups(
  providers: readonly ProviderInfo[],
  models: Record<string, string[]>,
  errors: Record<string, string>,
  choice: { provider: string; model: string | null } | null,
): PickerGroup[] {
  return providers.map((p) => {
    const listed = models[p.name] ?? [];
    const chosen = choice?.provider === p.name ? choice.model : null;
    return {
      provider: p.name,
      label: p.isDefault ? `${p.name} (default)` : p.name,
      models: chosen && !listed.includes(chosen) ? [chosen, ...listed] : listed,
      error: errors[p.name] ?? null,
    };
  });
}
