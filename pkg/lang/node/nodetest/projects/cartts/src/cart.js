function lineTotal(item) {
  return item.price * item.qty;
}

function cartTotal(items) {
  let sum = 0;
  for (const item of items) {
    sum += lineTotal(item);
  }
  return sum;
}

module.exports = { lineTotal, cartTotal };
