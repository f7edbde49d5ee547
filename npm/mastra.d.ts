import type { Limits } from "./index.js";

/**
 * A Mastra output processor that caps each tool's result on `processToolResult` to the limit of
 * its name in `limits` (the defaults without it): a string as text, any other JSON value as JSON
 * of the same shape.
 */
export declare class ToolOutputCapProcessor {
  readonly id: "tool-output-cap";
  readonly name: string;
  readonly limits: Limits;
  constructor(limits?: Limits);
  processToolResult(args: { messageList: any; toolName: string; toolCallId: string; args: unknown; result: unknown }): any;
}
