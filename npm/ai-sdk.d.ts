import type { Limits } from "./index.js";

/**
 * `tools` (the object `generateText` and `streamText` take), each tool's output capped to its
 * limit in `limits` (the defaults without it) through `toModelOutput`, a tool's own first. A
 * thrown error's message keeps its tail. Warns of a `perTool` name that is none of the tools.
 */
export declare function capTools<T extends Record<string, object>>(tools: T, limits?: Limits): T;
