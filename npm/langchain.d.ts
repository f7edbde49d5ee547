import type { Limits } from "./index.js";

/**
 * A LangChain.js agent middleware (`createMiddleware` with `wrapToolCall`) that caps each tool's
 * `ToolMessage` to the limit of the tool the model called, in `limits` (the defaults without
 * it). An error message keeps its tail. Warns, when the model is first called, of a `perTool`
 * name that is none of its tools.
 */
export declare function toolOutputCapMiddleware(limits?: Limits): ReturnType<typeof import("langchain").createMiddleware>;
