// The bench's large command body (bench 4c, 8 and 8b): an order of small
// items, about `bytes` of JSON, the shape a document or a cart import has.
export function orderBody(bytes) {
  const items = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const item = { sku: `SKU-${String(i).padStart(6, "0")}`, name: `product ${i} of the bench's order`, quantity: 1 + (i % 7),
      price: Math.round(i * 37.3) / 100, tags: ["bench", i % 2 ? "odd" : "even"] };
    size += JSON.stringify(item).length + 1;
    items.push(item);
  }
  return { amount: 1, items };
}
