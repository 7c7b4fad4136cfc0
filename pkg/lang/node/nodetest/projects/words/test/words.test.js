const assert = require('node:assert');
const { count } = require('../lib/words');

describe('words', () => {
  describe('count', () => {
    it('counts words', () => {
      assert.strictEqual(count('a b  c'), 3);
    });

    it('counts nothing in blanks', () => {
      assert.strictEqual(count('   '), 0);
    });
  });
});
