const { test } = require('node:test');
const assert = require('node:assert');
const { sum } = require('../lib/sum');

test('sums', () => {
  assert.strictEqual(sum([1, 2]), 3);
});
