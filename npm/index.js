// tool-output-cap for JavaScript: the crate's exact cap, as a thin wrapper on its addon. Each
// function has a variant that runs on the libuv pool (`capAsync`, ...), for large outputs.
"use strict";

const native = require("./native.js");

/** A manifest, or a `Limits` option, that the crate refuses: the message says where and what. */
class ManifestError extends Error {
  constructor(message) {
    super(message);
    this.name = "ManifestError";
  }
}

/** `text` when the addon gave it back unchanged (`null`): the caller's own string. */
const capped = (text, result) => (result.text === null ? { text, truncation: null } : result);
const json = (value) => (typeof value === "string" ? value : JSON.stringify(value));

const count = (text, options) => native.count(text, options);
const countAsync = (text, options) => native.countAsync(text, options);
const cap = (text, options) => capped(text, native.cap(text, options));
const capAsync = async (text, options) => capped(text, await native.capAsync(text, options));

/** The limit of every tool, of each tool by name, and the tokenizer they count with. */
class Limits {
  #native;

  /** The keys of the manifest's `[worker.tool_output]`, in camel case. */
  constructor(options) {
    this.#native = manifest(() => (options instanceof native.NativeLimits ? options : new native.NativeLimits(options)));
  }

  /** The `[worker.tool_output]` section of the manifest at `path`, as the crate reads it. */
  static fromManifest(path) {
    return new Limits(manifest(() => native.NativeLimits.fromManifest(path)));
  }

  cap(toolName, text, options) {
    return capped(text, this.#native.cap(toolName, text, options));
  }

  async capAsync(toolName, text, options) {
    return capped(text, await this.#native.capAsync(toolName, text, options));
  }

  capJson(toolName, value, options) {
    const text = json(value);
    return capped(text, this.#native.capJson(toolName, text, options));
  }

  async capJsonAsync(toolName, value, options) {
    const text = json(value);
    return capped(text, await this.#native.capJsonAsync(toolName, text, options));
  }

  /** The parts of one output capped as one text joined by newlines; null when within. */
  capTexts(toolName, texts, options) {
    return this.#native.capTexts(toolName, texts, options);
  }

  count(text) {
    return this.#native.count(text);
  }

  maxTokensFor(toolName) {
    return this.#native.maxTokensFor(toolName);
  }

  unmatchedTools(tools) {
    return this.#native.unmatchedTools(tools);
  }
}

/** `make()`, its error a `ManifestError`. */
function manifest(make) {
  try {
    return make();
  } catch (error) {
    throw new ManifestError(error.message);
  }
}

module.exports = { count, countAsync, cap, capAsync, Limits, ManifestError };
