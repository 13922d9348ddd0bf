import { describe, expect, it } from 'vitest';
import { formatPrice, formatTokens, specLabel } from './modelSpec';

describe('model spec labels', () => {
  it('says windows in a few characters', () => {
    expect([8192, 32768, 128000, 200000, 1048576, 1500000, 512].map(formatTokens)).toEqual(['8K', '33K', '128K', '200K', '1M', '1.5M', '512']);
  });

  it('says prices per million tokens as people read them', () => {
    expect([10, 2.5, 0.15, 0.6, 0.075, 75, 0].map(formatPrice)).toEqual(['$10', '$2.50', '$0.15', '$0.60', '$0.075', '$75', '$0']);
  });

  it('shows window and price where known, free for a local server, and never $0 for an unknown price', () => {
    expect(specLabel({ contextWindow: 128000, prices: { input: 2.5, output: 10 }, free: false })).toBe('128K · $2.50 / $10 per M');
    expect(specLabel({ contextWindow: 32768, prices: { input: 0, output: 0 }, free: true })).toBe('33K · free');
    expect(specLabel({ contextWindow: null, prices: null, free: false })).toBe('price unknown');
    expect(specLabel({ contextWindow: 200000, prices: null, free: false })).toBe('200K · price unknown');
  });
});
