package nodetest

import (
	"embed"
	"io/fs"
	"path"
	"strings"

	"golang.org/x/tools/txtar"
)

// projects are the fixture projects, each the first commit of its
// history: package.json with exact-pinned devDependencies and the
// package-lock.json npm install -E wrote for it (no registry host in it).
//
//go:embed projects
var projects embed.FS

// Project is the fixture project name ("price", "cart", "cartts", "words", "tally")
// as a txtar archive whose comment is msg: a history's first commit.
func Project(name, msg string) string {
	ar := txtar.Archive{Comment: []byte(msg + "\n\n")}
	root := path.Join("projects", name)
	err := fs.WalkDir(projects, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := projects.ReadFile(p)
		if err != nil {
			return err
		}
		ar.Files = append(ar.Files, txtar.File{Name: strings.TrimPrefix(p, root+"/"), Data: data})
		return nil
	})
	if err != nil {
		panic("nodetest: fixture project " + name + ": " + err.Error())
	}
	return string(txtar.Format(&ar))
}

// Price is a TypeScript project tested with vitest 4.1.12 (vite 8.3.8),
// with typescript 7.0.2: four commits whose third, PriceBroken, makes
// PriceTest fail (PriceFailure) inside a larger change (a rounding module
// with its own passing test); the others keep every test passing.
var Price = []string{
	Project("price", "price: discounts and totals"),
	`price: document the package

-- README.md --
price discounts and totals prices.
`,
	`price: totals are rounded to cents, from the first discounted item

-- src/round.ts --
export function round(x: number): number {
  return Math.round(x * 100) / 100;
}
-- src/round.test.ts --
import { describe, expect, it } from 'vitest';
import { round } from './round';

describe('round', () => {
  it('keeps cents', () => {
    expect(round(1.005 * 1000)).toBe(1005);
  });
});
-- src/price.ts --
import { round } from './round';

export function discount(price: number, rate: number): number {
  return price - price * rate;
}

export function total(prices: number[], rate: number): number {
  let sum = 0;
  for (const p of prices.slice(1)) {
    sum += discount(p, rate);
  }
  return round(sum);
}
`,
	`price: a note on totals

-- README.md --
price discounts and totals prices, rounded to cents.
`,
}

// PriceBroken is the index in Price of the commit that breaks PriceTest.
const PriceBroken = 2

// PriceTest is the test PriceBroken breaks, by its canonical id;
// PriceJUnitClassname and PriceJUnitName are how vitest's JUnit reporter
// names it (the file, and the describe blocks and title joined by " > ");
// PricePassing passes at every commit; PriceFailure is the failing
// assertion's message (vitest's, as its JUnit report's failure message
// says it too); PriceFrame the failing line, in the test file.
const (
	PriceTest           = "src/price.test.ts::price > totals the prices"
	PriceJUnitClassname = "src/price.test.ts"
	PriceJUnitName      = "price > totals the prices"
	PricePassing        = "src/price.test.ts::price > applies the discount"
	PriceFailure        = "expected 45 to be 135 // Object.is equality"
	PriceFrame          = "src/price.test.ts:10"
)

// PriceUnloadable is Price whose third commit moves src/price.ts to
// src/prices.ts (its callers elsewhere updated, not the test), so that
// src/price.test.ts no longer loads: vitest's JUnit report names the file
// twice (PriceUnloadableFile as classname and name) with a failure
// whose message starts PriceUnloadableMessage.
var PriceUnloadable = []string{Price[0], Price[1], `price: the module is prices

-- src/price.ts --
(deleted)
-- src/prices.ts --
export function discount(price: number, rate: number): number {
  return price - price * rate;
}

export function total(prices: number[], rate: number): number {
  let sum = 0;
  for (const p of prices) {
    sum += discount(p, rate);
  }
  return sum;
}
`, Price[3]}

const (
	PriceUnloadableFile    = "src/price.test.ts"
	PriceUnloadableMessage = "Cannot find module './price' imported from "
)

// Cart is a JavaScript (CommonJS) project tested with jest 30.5.2, whose
// CI reports through jest-junit 17.0.0 in its default dialect: four
// commits whose third, CartBroken, makes CartTest fail inside a larger
// change (a tax module with its own passing test).
var Cart = []string{
	Project("cart", "cart: line and cart totals"),
	`cart: document the package

-- README.md --
cart totals shopping carts.
`,
	`cart: totals add tax, from the first line on

-- src/tax.js --
function withTax(amount, rate) {
  return Math.round(amount * (1 + rate) * 100) / 100;
}

module.exports = { withTax };
-- src/tax.test.js --
const { withTax } = require('./tax');

describe('tax', () => {
  test('adds the rate', () => {
    expect(withTax(10, 0.2)).toBe(12);
  });
});
-- src/cart.js --
const { withTax } = require('./tax');

function lineTotal(item) {
  return item.price * item.qty;
}

function cartTotal(items, rate = 0) {
  let sum = 0;
  for (const item of items.slice(1)) {
    sum += lineTotal(item);
  }
  return withTax(sum, rate);
}

module.exports = { lineTotal, cartTotal };
`,
	`cart: a note on tax

-- README.md --
cart totals shopping carts, tax included.
`,
}

// CartBroken is the index in Cart of the commit that breaks CartTest.
const CartBroken = 2

// CartTest is the test CartBroken breaks, by its canonical id; jest-junit
// names it by default with its describe blocks and title joined by spaces
// as both classname and name, which report.ParseJUnit reads as the
// suite's name (CartJUnitSuite, the file's first describe block) for its
// package and CartJUnitName for its test;
// CartPassing passes at every commit; CartFailure is the failing
// assertion's message as the driver reports it (jest's message, its
// Expected and Received lines joined with "; "); CartFrame the failing
// line.
const (
	CartTest       = "src/cart.test.js::cart > totals the items"
	CartJUnitSuite = "cart"
	CartJUnitName  = "cart totals the items"
	CartPassing    = "src/cart.test.js::cart > prices a line"
	CartFailure    = "expect(received).toBe(expected) // Object.is equality; Expected: 10; Received: 4"
	CartFrame      = "src/cart.test.js:9"
)

// CartTS is cart's first commit configured in TypeScript: jest.config.ts,
// which jest reads through ts-node 10.9.2 (typescript 5.9.3), both locked;
// every test passes, CartPassing among them.
var CartTS = []string{Project("cartts", "cart: jest configured in TypeScript")}

// Words is a JavaScript project tested with mocha 12.0.3 (its tests in
// test/, nested describe blocks), one commit, every test passing;
// WordsTest is one of its tests.
var Words = []string{Project("words", "words: count words")}

const WordsTest = "test/words.test.js::words > count > counts words"

// Tally is a JavaScript project tested with node:test (no dependencies,
// no lockfile), one commit, every test passing; TallyTest is one of its
// tests.
var Tally = []string{Project("tally", "tally: count items")}

const TallyTest = "test/tally.test.js::tally > counts each item"

// Lint is a JavaScript project linted by eslint 10.15.0 (its flat
// configuration at the root: no-unused-vars and no-undef are errors) and
// tested with node:test, one commit, clean and passing.
var Lint = []string{Project("lint", "lint: sum, linted by eslint")}
