// What a server-side process does with WowClient in the runtime tests, the
// same in Node.js, Deno, Bun (node-process.mjs) and Vercel's edge-runtime
// (edge-runtime-guest.mjs): `mode` is send, resume, probe or intents; each
// result goes to `print`.
export async function clientMode(WowClient, { mode, storage, namespace, baseUrl, arg, print }) {
  const client = await WowClient.connect({ user: null, baseUrl, storage, namespace, timeoutMs: 15_000 });
  if (mode === "send") {
    const commands = JSON.parse(arg);
    for (const outcome of await Promise.all(commands.map((c) => client.send(c)))) print(outcome);
  } else if (mode === "resume") {
    print(await client.resume());
  } else if (mode === "probe") {
    // A send, a stage stream read with for await, and a send whose answer
    // the gateway drops after the append (the test armed that fault for `lost`).
    const { id, lost } = JSON.parse(arg);
    const created = await client.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account",
      create: true, body: { name: id, balance: 10 } });
    const stages = [];
    const stream = client.sendAndWaitStream({ aggregate: { resource: "account", id }, action: "lock_amount",
      body: { amount: 1 }, waitStage: "SNAPSHOT" });
    for await (const element of stream) stages.push([element.stage, element.succeeded]);
    const streamed = await stream.outcome;
    const dropped = await client.send({ aggregate: { resource: "account", id: lost }, action: "lock_amount", body: { amount: 1 } });
    print({ created: created.requestId, stages, streamed: streamed.status,
      lost: { status: dropped.status, appended: dropped.appended, attempts: dropped.attempts, requestId: dropped.requestId } });
  } else {
    print(await client.intents());
  }
  client.free();
}
