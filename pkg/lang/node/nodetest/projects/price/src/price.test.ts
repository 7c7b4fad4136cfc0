import { describe, expect, it } from 'vitest';
import { discount, total } from './price';

describe('price', () => {
  it('applies the discount', () => {
    expect(discount(100, 0.1)).toBe(90);
  });

  it('totals the prices', () => {
    expect(total([100, 50], 0.1)).toBe(135);
  });
});
