/** What a Wow OpenAPI document does not say, supplied by the caller. */
export interface GenerateHints {
  /** Per operationId: `void` (a `@VoidCommand`, waited for at SENT), or a corrected `create` / `allowCreate`. */
  operations?: Record<string, { void?: boolean; create?: boolean; allowCreate?: boolean }>;
  /** Per context alias: its domain error codes (error events, handler codes), added to its `ErrorCode` union. */
  errorCodes?: Record<string, string[]>;
}

/** What to generate from, and where to. */
export interface GenerateOptions {
  /** The OpenAPI document: a file path, an http(s) URL (a Wow service's `/v3/api-docs`), or the parsed document. */
  input: string | object;
  /** The output directory: schema.ts, support.ts, <context>/<aggregate>.ts, <context>/index.ts, index.ts. */
  out: string;
  /** What the document does not say. */
  hints?: GenerateHints;
  /** The module the output imports the SDK's types from (default "wow-command-client"). */
  importFrom?: string;
  /** Progress lines and warnings. */
  log?: (line: string) => void;
}

/** What was generated. */
export interface GenerateResult {
  /** The files written. */
  files: string[];
  /** How many command builders. */
  commands: number;
  /** How many aggregates. */
  aggregates: number;
  /** One per operation left out or read with a caveat, naming it. */
  warnings: string[];
}

/** Generates typed command builders for every command operation of a Wow OpenAPI document. */
export function generate(options: GenerateOptions): Promise<GenerateResult>;
