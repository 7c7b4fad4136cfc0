const { describe, it } = require('node:test');
const assert = require('node:assert');
const { tally } = require('../tally');

describe('tally', () => {
  it('counts each item', () => {
    assert.deepStrictEqual(tally(['a', 'b', 'a']), { a: 2, b: 1 });
  });

  it('counts nothing', () => {
    assert.deepStrictEqual(tally([]), {});
  });
});
