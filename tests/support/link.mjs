// A network link between browser pages and the test gateway that a test can
// cut: a TCP relay on loopback. Cut, it resets every connection it carries
// and every new one, as a dead Wi-Fi or a pulled cable does to a browser that
// still believes it is online (`navigator.onLine` stays true, requests fail
// or hang up): the outage an engine without offline emulation can still meet.
import { connect, createServer } from "node:net";

/**
 * Starts a relay to `127.0.0.1:port`; resolves to `{ base, cut(on), close() }`,
 * `base` being the URL pages load from instead of the gateway's.
 */
export async function cuttableLink(port) {
  const open = new Set();
  let cut = false;
  const server = createServer((inbound) => {
    if (cut) return inbound.resetAndDestroy();
    const outbound = connect(port, "127.0.0.1");
    const pair = [inbound, outbound];
    open.add(pair);
    const drop = () => {
      open.delete(pair);
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on("error", drop).on("close", drop);
    outbound.on("error", drop).on("close", drop);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise((resolve, reject) => server.listen(0, "127.0.0.1", resolve).once("error", reject));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    /** Cuts the link (every connection reset, new ones refused) or mends it. */
    cut(on) {
      cut = on;
      if (!on) return;
      for (const [inbound, outbound] of open) {
        inbound.resetAndDestroy();
        outbound.destroy();
      }
      open.clear();
    },
    close: () => new Promise((resolve) => {
      for (const [inbound, outbound] of open) { inbound.destroy(); outbound.destroy(); }
      server.close(() => resolve());
    }),
  };
}
