// The test gateway beside another host, for the attacks that would send a
// command elsewhere: the gateway on a port P whose neighbour 10P+7 is a
// second server recording every request it receives. A record whose path
// lost its leading "/" ("7/account/…") would be joined as text onto
// "http://127.0.0.1:P" into "http://127.0.0.1:P7/account/…", and a redirect
// can point at it.
import { createServer } from "node:http";
import { startGateway } from "./gateway.mjs";

// Ports browsers refuse to fetch (the fetch standard's "bad ports") between
// the ones tried here: neither the gateway nor its neighbour may be one.
const BAD = new Set([1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697]);

/** Another host on `port` that records every request (method, path, headers, body) and answers 200 `{}`. */
export function listen(port) {
  const received = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => { body += d; });
    req.on("end", () => {
      received.push({ method: req.method, path: req.url, headers: req.headers, body });
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve({
      base: `http://127.0.0.1:${port}`, received, close: () => new Promise((r) => server.close(r)),
    }));
  });
}

/** `{ gateway, other }`: a gateway (startGateway's `options`) on P, another host on 10P+7. */
export async function gatewayBesideAnotherHost(options = {}) {
  for (let tries = 0; ; tries++) {
    const port = 1100 + Math.floor(Math.random() * 5400);
    if (BAD.has(port)) continue;
    const other = await listen(port * 10 + 7).catch(() => null);
    if (!other) continue;
    try {
      return { gateway: await startGateway({ ...options, port }), other };
    } catch (e) {
      await other.close();
      if (tries > 20) throw e;
    }
  }
}

/** What reached `gateway` with `requestId` (every request, before routing or faults). */
export async function arrivals(gateway, requestId) {
  const r = await fetch(`${gateway.base}/__gateway/arrivals?requestId=${encodeURIComponent(requestId)}`);
  return (await r.json()).arrivals;
}
