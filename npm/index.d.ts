/** The encodings the crate counts with. */
export type Encoding = "o200k_base" | "cl100k_base";
/** What a cut keeps: the start, the end (an error's default), or both with `[... cut here ...]`. */
export type Keep = "head" | "tail" | "head_tail";

/** How a text over its limit was cut; `droppedTokens` is the note's `N`. */
export interface Truncation {
  originalTokens: number;
  keptTokens: number;
  droppedTokens: number;
  maxTokens: number;
  keep: Keep;
}

/** A capped text: the caller's own string, and `truncation` null, when it was within its limit. */
export interface Capped {
  text: string;
  truncation: Truncation | null;
}

/**
 * A capped JSON value: `text` is compact JSON of the same shape when `isJson`; when no cut of the
 * shape fits (an object of many short fields), it is that JSON capped as text, and `isJson` is
 * false. Within its limit, the caller's own text, `truncation` null and `isJson` true.
 */
export interface CappedJson extends Capped {
  isJson: boolean;
}

export interface CountOptions {
  /** `o200k_base` unless given. */
  encoding?: Encoding;
}

export interface CapOptions {
  /** The limit, the note included: 5000 unless given, at least 32. */
  maxTokens?: number;
  keep?: Keep;
  /** Said after the note: `truncated: N tokens dropped, refine your query: HINT`. */
  hint?: string;
  encoding?: Encoding;
}

/** A tool's own limit: its tokens, or its keys. */
export type ToolLimit = number | { maxTokens: number; keep?: Keep; hint?: string };

/** The keys of the manifest's `[worker.tool_output]`, in camel case. */
export interface LimitsOptions {
  defaultMaxTokens?: number;
  defaultKeep?: Keep;
  perTool?: Record<string, ToolLimit>;
  /** `encoding` or `tokenizerFile`, not both. */
  encoding?: Encoding;
  /** A model's own `tokenizer.json`. */
  tokenizerFile?: string;
  maxTokensPerTurn?: number;
  /** All the tool results of one model API request together (`capRequest`). */
  maxTokensPerRequest?: number;
  /** Their share of the provider's per-minute input-token limit, once a `RateLimit` learned it. */
  rateLimitShare?: number;
  /** How images are priced: Anthropic's rule (the default), OpenAI's tile models', or Gemini's. */
  imageTokens?: "anthropic" | "openai" | "gemini";
}

/** `capRequest`'s options. */
export interface CapRequestOptions {
  /** The provider's per-minute limit, learned: with `rateLimitShare`, the results stay within that share of it. */
  rateLimit?: RateLimit;
}

/**
 * The per-minute input-token limit a provider reports on its answers, learned for the requests
 * after them. One for each provider key (each model behind a router); shared by every request.
 */
export declare class RateLimit {
  constructor();
  /** Learns the limit `headers` report (the provider's own, or LiteLLM's `llm_provider-` copies): the limit, or null. */
  learn(headers: Headers | Record<string, string | number | undefined>): number | null;
  /** The limit learned so far; null before. */
  readonly limit: number | null;
}

/** The model APIs whose requests `capRequest` reads. */
export type Api = "anthropic" | "openai-chat" | "openai-responses" | "gemini";

/** One tool result a request's cap cut. */
export interface RequestCut {
  /** The tool whose call it answers; null when the call is not in the request. */
  tool: string | null;
  error: boolean;
  truncation: Truncation;
  /** Cut for an earlier request, and taken from the cuts kept. */
  cached: boolean;
  /** Given way whole to `maxTokensPerRequest`: one line in its place. */
  elided: boolean;
}

/** A request with its tool results capped: `body` null when nothing needed a cut. */
export interface CappedRequest {
  body: string | null;
  cuts: RequestCut[];
}

export interface ToolCapOptions {
  /** The output is the tool's error: its tail is kept. */
  error?: boolean;
  /**
   * What a framework writes before the text (the AI SDK writes a thrown error as `Error: ...`):
   * the prefix and the capped text together are within the limit. Not part of `text`.
   */
  prefix?: string;
}

// Every function throws a `TypeError` naming the argument for a value of the wrong type.

/** The tokens of `text`, read as ordinary text (special-token text is text). */
export declare function count(text: string, options?: CountOptions): number;
/** `count` on the libuv pool: the event loop goes on meanwhile. */
export declare function countAsync(text: string, options?: CountOptions): Promise<number>;
/** `text` within `maxTokens`, ended by the note when cut. Bad options throw with the crate's message. */
export declare function cap(text: string, options?: CapOptions): Capped;
/** `cap` on the libuv pool: the event loop goes on meanwhile. */
export declare function capAsync(text: string, options?: CapOptions): Promise<Capped>;

/** The limit of every tool, of each tool by name, and the tokenizer they count with. */
export declare class Limits {
  /** Throws `ManifestError`, naming the option, for limits the crate refuses. */
  constructor(options?: LimitsOptions);
  /** The manifest's `[worker.tool_output]`; a `ManifestError` names the file, line, column and key. */
  static fromManifest(path: string): Limits;
  /** `text`, an output of `toolName`, capped to the tool's limit; an error keeps its tail. */
  cap(toolName: string, text: string, options?: ToolCapOptions): Capped;
  capAsync(toolName: string, text: string, options?: ToolCapOptions): Promise<Capped>;
  /**
   * A structured result (a value, or its JSON text) capped to compact JSON of the same shape:
   * its longest string cut and ending with the note, or its largest lists shortened. When no such
   * cut fits, its JSON capped as text, and `isJson` false: branch on it. Text that is not JSON
   * throws.
   */
  capJson(toolName: string, value: unknown, options?: ToolCapOptions): CappedJson;
  capJsonAsync(toolName: string, value: unknown, options?: ToolCapOptions): Promise<CappedJson>;
  /**
   * The parts of one output (an MCP result's text blocks) capped as one text joined by
   * newlines: each part's kept text, null for a part wholly cut out; null when within the limit.
   */
  capTexts(toolName: string, texts: string[], options?: ToolCapOptions): { texts: (string | null)[]; truncation: Truncation } | null;
  /**
   * One result's content blocks (MCP's, or a framework's own shapes: the AI SDK's `image-data`,
   * LangChain's `image`) capped together: their text as one text, their images priced by
   * `imageTokens`, scaled down in place or the last giving way, PDFs and audio by the crate's
   * estimate. Each block comes with, in `sources`, the place of the block it came from (null for
   * the note that media gave way); null when they fit.
   */
  capBlocks(toolName: string, blocks: object[], options?: ToolCapOptions): { blocks: object[]; sources: (number | null)[]; truncation: Truncation } | null;
  /**
   * A model API request (its JSON text, or the object) with each tool result cut to the limit
   * of the tool whose call it answers, as the gateway cuts it; the cuts are kept between calls.
   * A body that is not a JSON object throws.
   */
  capRequest(api: Api, body: string | object, options?: CapRequestOptions): CappedRequest;
  capRequestAsync(api: Api, body: string | object, options?: CapRequestOptions): Promise<CappedRequest>;
  count(text: string): number;
  /** The limit of `toolName`'s outputs, the note included. */
  maxTokensFor(toolName: string): number;
  /** The `perTool` names that are none of `tools`: limits that never apply (case-sensitive). */
  unmatchedTools(tools: string[]): string[];
}

/** A manifest, or a `Limits` option, that the crate refuses: the message says where and what. */
export declare class ManifestError extends Error {}
