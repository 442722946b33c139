// An app that sends commands and never imports the idempotent consumer. It
// never calls init() either: WowClient.connect loads the module itself.
import { WowClient } from "wow-command-client";

try {
  const client = await WowClient.connect({ user: null, baseUrl: location.origin, namespace: "client-only" });
  document.body.dataset.namespace = client.namespace;
} catch (e) {
  document.body.dataset.error = e.message;
}
