const { lineTotal, cartTotal } = require('./cart');

describe('cart', () => {
  test('prices a line', () => {
    expect(lineTotal({ price: 3, qty: 2 })).toBe(6);
  });

  test('totals the items', () => {
    expect(cartTotal([{ price: 3, qty: 2 }, { price: 1, qty: 4 }])).toBe(10);
  });
});
