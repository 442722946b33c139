import type { IntentRecord, WowClient } from "./index.js";

/** Where the panel's button sits. */
export type DevtoolsPosition = "bottom-right" | "bottom-left" | "top-right" | "top-left";
/** Its colours: the system's, light or dark. */
export type DevtoolsTheme = "system" | "light" | "dark";

/** `mountDevtools`'s options (and `WowDevtools`'s props); each may be left out. */
export interface DevtoolsOptions {
  /** Open at once (default: as last left, else closed). */
  open?: boolean;
  /** Default: as last left, else "bottom-right". */
  position?: DevtoolsPosition;
  /** Default: as last left, else "system". */
  theme?: DevtoolsTheme;
  /** Remember open, position and theme in localStorage (default true). */
  remember?: boolean;
  /** Where the element is appended (default document.body). */
  container?: Element;
  /** The custom element's name (default "wow-devtools"). */
  tag?: string;
}

/** What a support ticket needs of each intent; `body` only when asked for. */
export interface IntentDiagnostics {
  intentId: string;
  intentKey: string | null;
  requestId: string;
  aggregate: IntentRecord["aggregate"];
  action: string | null;
  state: IntentRecord["state"];
  reason: string | null;
  appended: boolean | null;
  appendedVersion: number | null;
  scope: string | null;
  scopeSeq: number | null;
  waitsFor: string | null;
  createdAt: number;
  updatedAt: number;
  waitStage: string | null;
  /** Each attempt's commandId, in order (null where none was answered). */
  commandIds: (string | null)[];
  attempts: { number: number; sentAt: number; endedAt: number | null; outcome: unknown; commandId: string | null; waitEndedBy: string | null }[];
  lastResult: { errorCode: string; errorMsg: string; stage: string; commandId: string; aggregateVersion: number | null; signalTime: number | null } | null;
  body?: unknown;
}

/** The export for a support ticket: which intents, when, and whether their bodies are in it. */
export interface Diagnostics {
  kind: "wow-command-client diagnostics";
  exportedAt: string;
  namespace: string | null;
  bodies: boolean;
  intents: IntentDiagnostics[];
}

/** The `<wow-devtools>` element. */
export interface WowDevtoolsElement extends HTMLElement {
  /** The diagnostics of the selected intents (else those shown): no body unless `bodies`. */
  exportDiagnostics(options?: { bodies?: boolean }): Diagnostics;
}

/** Defines the element (once) where custom elements exist; returns its tag. */
export function defineDevtools(tag?: string): string;

/**
 * Mounts the panel for `client`, closed behind a small button unless remembered open.
 * Where there is no document (server rendering, a worker) it mounts nothing (`element` null).
 */
export function mountDevtools(client: WowClient, options?: DevtoolsOptions): MountedDevtools;

/** A mounted panel: its element (null where nothing was mounted) and how to remove it. */
export interface MountedDevtools {
  element: WowDevtoolsElement | null;
  /** Removes the panel (it stops listening); the client and its intents are untouched. */
  unmount(): void;
}

/** Diagnostics of `records` for a support ticket: no body unless `bodies`. */
export function diagnostics(records: IntentRecord[], options?: { bodies?: boolean; namespace?: string | null; now?: number }): Diagnostics;
