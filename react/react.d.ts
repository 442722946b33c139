import type { ReactNode } from "react";
import type {
  CallOptions, Command, CommandError, ConnectOptions, IntentFilter, IntentRecord, IntentState, Outcome, WowClient,
} from "wow-command-client";

/** `WowProvider`'s props: connect options, or a client the app connected itself. */
export interface WowProviderProps {
  /** Read when the provider connects; give the provider a `key` to connect again with other options. Its `user` may be left to the `user` prop. */
  options?: Omit<ConnectOptions, "user"> & { user?: string | null };
  /**
   * The signed-in user's id, or null for an app without sign-in (`options.user` when left out). When it
   * changes the provider connects again as the new user, freeing the previous client: one user's
   * intents are never driven, listed or sent for another.
   */
  user?: string | null;
  /** A client (or a promise of one) the app connected itself, instead of `options`; the provider never frees it. */
  client?: WowClient | Promise<WowClient>;
  children?: ReactNode;
}

/**
 * Connects one client when first mounted (in an effect: nothing runs at import or while rendering on
 * a server) and frees it when unmounted. Hooks below it share it; a `send` before it has connected waits.
 */
export function WowProvider(props: WowProviderProps): ReactNode;

/** The provider's client once connected (null before), or why it could not connect. */
export function useWowClient(): { client: WowClient | null; error: CommandFailure | null };

/**
 * What `useCommand().error` holds: a `CommandError` (`instanceof` gives its outcome), or why the provider
 * could not connect (the `TypeError` of a mistake in its options, which has no `code`).
 */
export type CommandFailure = CommandError | (Error & { code?: string });

/** Where `useCommand`'s intent is: its journal state, or "idle" before a send and "failed" when the send was refused. */
export type CommandState = "idle" | "failed" | IntentState;

/** What `useCommand()` returns. */
export interface UseCommand {
  /**
   * Sends through `client.send` and resolves to its Outcome (business outcomes do not throw; a refused
   * command throws `CommandError`). The hook follows this intent from then on, the previous one no longer.
   */
  send(command: Command, options?: CallOptions): Promise<Outcome>;
  /** Stops following the intent and returns to "idle"; the intent itself is not withdrawn. */
  reset(): void;
  /**
   * pending → sending → unknown → succeeded / rejected / conflict / escalated, as the journal says, also after
   * `send` returned; a scoped intent is `queued` first while an earlier one of its scope is unsettled, and
   * `withdrawn` if `client.withdraw` ended it before it was sent.
   */
  state: CommandState;
  intentId: string | null;
  /** What the last `send` resolved to. */
  outcome: Outcome | null;
  /**
   * Why the intent has not succeeded (the outcome as a `CommandError`, or what `send` threw); null once it
   * succeeds. `error?.code` reads the code; a provider that could not connect gives what
   * `WowClient.connect` threw.
   */
  error: CommandFailure | null;
}

/** One intent at a time; unmounting stops following it and never withdraws it. */
export function useCommand(): UseCommand;

/**
 * The journal's record of one intent (its intentId, requestId or intentKey), live across tabs and
 * reloads. `undefined` until the journal has been read; `null` when there is no such intent; never the
 * record of another intent. The hooks share one store per client: one read seeds it, and each change is
 * one read of the intent that changed, however long the journal is.
 */
export function useIntent(intent: string | null | undefined): IntentRecord | null | undefined;

/** The journal's records matching `filter`, oldest first, live (`[]` until first read); the same array while none of them changed. */
export function useIntents(filter?: IntentFilter): readonly IntentRecord[];

/**
 * The devtools panel (`wow-command-client/devtools`) for the provider's client (or `client`),
 * loaded when first mounted: render it only in development, or behind a flag. Renders nothing itself.
 */
export function WowDevtools(props: { client?: WowClient | null } & import("wow-command-client/devtools").DevtoolsOptions): null;
