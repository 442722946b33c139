// What an idempotent consumer's delivery costs, in Node on the built package:
// `handle` of a new identity (started, the effect, done: two compare-and-swap
// writes) and of the same identity again (one read: skipped), over the
// built-in memory store and over a caller's adapter (a Map behind promises,
// with compareAndSet). Packages given with --pkg run in interleaved rounds
// (one round each, in turn), so a comparison shares the machine's state;
// the median and the spread of the rounds per package and store.
//
//   node bench/consumer.mjs [--rounds 5] [--deliveries 3000] [--pkg DIR]...
const root = new URL("..", import.meta.url).pathname;
const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? fallback : argv[i + 1];
};
const rounds = Math.max(5, Number(option("rounds", 5)));
const deliveries = Number(option("deliveries", 3000));
const pkgs = argv.flatMap((a, i) => (a === "--pkg" ? [argv[i + 1]] : []));
if (!pkgs.length) pkgs.push(`${root}pkg`);

/** A caller's adapter: a Map behind promises, with an atomic compareAndSet. */
function mapAdapter() {
  const map = new Map();
  const revision = (text) => (text == null ? 0 : JSON.parse(text).revision);
  return {
    get: async (key) => map.get(key) ?? null,
    set: async (key, value) => void map.set(key, value),
    delete: async (key) => void map.delete(key),
    list: async (prefix) => [...map].filter(([key]) => key.startsWith(prefix)),
    compareAndSet: async (key, expected, value) => {
      if (revision(map.get(key)) !== expected) return false;
      map.set(key, value);
      return true;
    },
  };
}

/** µs per delivery: each identity handled once (it runs), then again (skipped). */
async function round(pkg, store) {
  const { IdempotentConsumer } = await import(`${pkg}/consumer-node.js`);
  const consumer = await IdempotentConsumer.open({
    namespace: `bench-${Math.random()}`,
    storage: store === "adapter" ? mapAdapter() : "memory",
    allowDuplicates: true,
  });
  const started = performance.now();
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 0; i < deliveries; i++) await consumer.handle(`identity-${i}`, async () => i);
  }
  consumer.free?.();
  return ((performance.now() - started) / (2 * deliveries)) * 1000;
}

const stores = ["memory", "adapter"];
const took = new Map(pkgs.flatMap((p) => stores.map((s) => [`${p} ${s}`, []])));
for (let r = 0; r < rounds; r++) {
  for (const store of stores) for (const pkg of pkgs) took.get(`${pkg} ${store}`).push(await round(pkg, store));
}
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log(`consumer: µs per delivery (${deliveries} new identities, then each again), median (range) of ${rounds} interleaved rounds`);
for (const store of stores) {
  for (const pkg of pkgs) {
    const list = took.get(`${pkg} ${store}`);
    const range = `${Math.min(...list).toFixed(1)}–${Math.max(...list).toFixed(1)}`;
    console.log(`  ${store.padEnd(8)} ${median(list).toFixed(1).padStart(6)} (${range})  ${pkg}`);
  }
  if (pkgs.length > 1) {
    const [first, ...rest] = pkgs.map((p) => median(took.get(`${p} ${store}`)));
    console.log(`  ${store.padEnd(8)} ratio to the first: ${rest.map((m) => (m / first).toFixed(2) + "×").join(", ")}`);
  }
}
