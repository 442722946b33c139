// An app that sends commands and never imports the idempotent consumer.
import init, { WowClient } from "wow-command-client";

await init();
const client = await WowClient.connect({ baseUrl: location.origin, namespace: "client-only" });
document.body.dataset.namespace = client.namespace;
