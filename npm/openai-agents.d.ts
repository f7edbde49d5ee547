import type { Limits } from "./index.js";

/**
 * `tools`, each function tool's output capped to the limit of its name in `limits` (the
 * defaults without it): a string as text, a `{ type: "text" }` output's text, any other JSON
 * value as JSON of the same shape. Warns of a `perTool` name that is none of the tools.
 */
export declare function capTools<T extends { name?: string }>(tools: T[], limits?: Limits): T[];
