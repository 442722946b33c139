// Bench 8's `useIntents` operation: a React app's first render of its list
// through `wow-command-client/react`, built by bench/run.mjs (Vite, React in
// production mode) into the bench page's vendor/ folder. The app draws the
// first 50 rows, as a windowed list would: drawing 10,000 rows is the app's
// work, not the SDK's.
import { createElement as h, useEffect } from "react";
import { createRoot } from "react-dom/client";
import { WowProvider, useIntents } from "wow-command-client/react";

/** Mounts a provider on `client` into `element`; resolves once the list first shows rows, then unmounts. */
export function firstRender(client, element) {
  return new Promise((resolve) => {
    const root = createRoot(element);
    function List() {
      const records = useIntents();
      useEffect(() => {
        if (records.length) requestAnimationFrame(() => { root.unmount(); resolve(records.length); });
      }, [records]);
      return h("ul", null, records.slice(0, 50).map((r) => h("li", { key: r.intentId }, `${r.intentId} ${r.state}`)));
    }
    root.render(h(WowProvider, { client }, h(List)));
  });
}
