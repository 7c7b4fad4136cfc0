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
