function sum(xs) {
  let out = 0;
  for (const x of xs) {
    out += x;
  }
  return out;
}

module.exports = { sum };
