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

// The one place arguments are checked: a value of the wrong type is a `TypeError` naming the
// argument, before the addon would give a message of its own.

/** What `value` is, as a message says it. */
function kind(value) {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function expect(name, value, type) {
  if (typeof value !== type) throw new TypeError(`${name} must be a ${type}, found ${kind(value)}`);
  return value;
}

function expectStrings(name, values) {
  if (!Array.isArray(values)) throw new TypeError(`${name} must be an array of strings, found ${kind(values)}`);
  values.forEach((value, i) => expect(`${name}[${i}]`, value, "string"));
  return values;
}

/** The types of every option this package takes; the crate checks their values. */
const OPTION_TYPES = { encoding: "string", maxTokens: "number", keep: "string", hint: "string", error: "boolean", prefix: "string" };

function expectOptions(name, options) {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`${name} must be an object, found ${kind(options)}`);
  }
  for (const [key, type] of Object.entries(OPTION_TYPES)) {
    if (options[key] !== undefined) expect(`${name}.${key}`, options[key], type);
  }
  return options;
}

/** `text` when the addon gave it back unchanged (`null`): the caller's own string. */
const capped = (text, result) => (result.text === null ? { ...result, text, truncation: null } : result);
const json = (value) => (typeof value === "string" ? value : JSON.stringify(value));

const count = (text, options) => native.count(expect("text", text, "string"), expectOptions("options", options));
const countAsync = async (text, options) =>
  native.countAsync(expect("text", text, "string"), expectOptions("options", options));
const cap = (text, options) => capped(text, native.cap(expect("text", text, "string"), expectOptions("options", options)));
const capAsync = async (text, options) =>
  capped(text, await native.capAsync(expect("text", text, "string"), expectOptions("options", options)));

/** The limit of every tool, of each tool by name, and the tokenizer they count with. */
class Limits {
  #native;

  /** The keys of the manifest's `[worker.tool_output]`, in camel case. */
  constructor(options) {
    if (!(options instanceof native.NativeLimits) && options !== undefined && options !== null) {
      if (typeof options !== "object" || Array.isArray(options)) {
        throw new TypeError(`options must be an object, found ${kind(options)}`);
      }
    }
    this.#native = manifest(() => (options instanceof native.NativeLimits ? options : new native.NativeLimits(options)));
  }

  /** The `[worker.tool_output]` section of the manifest at `path`, as the crate reads it. */
  static fromManifest(path) {
    expect("path", path, "string");
    return new Limits(manifest(() => native.NativeLimits.fromManifest(path)));
  }

  cap(toolName, text, options) {
    return capped(text, this.#native.cap(...this.#checked(toolName, text, options)));
  }

  async capAsync(toolName, text, options) {
    return capped(text, await this.#native.capAsync(...this.#checked(toolName, text, options)));
  }

  capJson(toolName, value, options) {
    const text = json(value);
    return capped(text, this.#native.capJson(...this.#checked(toolName, text, options, "value")));
  }

  async capJsonAsync(toolName, value, options) {
    const text = json(value);
    return capped(text, await this.#native.capJsonAsync(...this.#checked(toolName, text, options, "value")));
  }

  /** The parts of one output capped as one text joined by newlines; null when within. */
  capTexts(toolName, texts, options) {
    expect("toolName", toolName, "string");
    return this.#native.capTexts(toolName, expectStrings("texts", texts), expectOptions("options", options));
  }

  /**
   * One result's content blocks (MCP's, or a framework's own shapes) capped together: their
   * text as one text, their images priced by `imageTokens`, scaled down or the last giving way.
   * `{ blocks, sources, truncation }`, each block with in `sources` the place of the block it
   * came from (null for the note that media gave way); null when they fit.
   */
  capBlocks(toolName, blocks, options) {
    expect("toolName", toolName, "string");
    if (!Array.isArray(blocks)) throw new TypeError(`blocks must be an array, found ${kind(blocks)}`);
    const capped = this.#native.capBlocks(toolName, JSON.stringify(blocks), expectOptions("options", options));
    return capped && { ...capped, blocks: capped.blocks.map((block) => JSON.parse(block)) };
  }

  /** A model API request's tool results capped, as the gateway caps them. */
  capRequest(api, body, options) {
    return this.#native.capRequest(expect("api", api, "string"), requestBody(body), rateLimitOf(options));
  }

  async capRequestAsync(api, body, options) {
    return this.#native.capRequestAsync(expect("api", api, "string"), requestBody(body), rateLimitOf(options));
  }

  count(text) {
    return this.#native.count(expect("text", text, "string"));
  }

  maxTokensFor(toolName) {
    return this.#native.maxTokensFor(expect("toolName", toolName, "string"));
  }

  unmatchedTools(tools) {
    return this.#native.unmatchedTools(expectStrings("tools", tools));
  }

  /** The arguments of a tool's cap, checked. */
  #checked(toolName, text, options, textName = "text") {
    if (text === undefined) throw new TypeError(`${textName} must be JSON, found undefined`);
    return [expect("toolName", toolName, "string"), expect(textName, text, "string"), expectOptions("options", options)];
  }
}

/** The per-minute input-token limit a provider reports, learned from its answers' headers. */
class RateLimit {
  #native = new native.NativeRateLimit();

  /**
   * Learns the limit `headers` report (a `Headers`, or an object of names and values: the
   * provider's own, or LiteLLM's copies prefixed `llm_provider-`); the limit, or null.
   */
  learn(headers) {
    if (headers === null || typeof headers !== "object" || Array.isArray(headers)) {
      throw new TypeError(`headers must be a Headers or an object, found ${kind(headers)}`);
    }
    const entries = typeof headers.entries === "function" ? [...headers.entries()] : Object.entries(headers);
    const pairs = entries.filter(([, value]) => value !== undefined && value !== null).map(([name, value]) => [name, String(value)]);
    return this.#native.learn(Object.fromEntries(pairs));
  }

  /** The limit learned so far; null before. */
  get limit() {
    return this.#native.limit;
  }

  /** The addon's own, for `capRequest`. */
  static native(rateLimit) {
    return rateLimit.#native;
  }
}

/** The `rateLimit` of `capRequest`'s options, checked: the addon's own, or undefined. */
function rateLimitOf(options) {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== "object" || Array.isArray(options)) throw new TypeError(`options must be an object, found ${kind(options)}`);
  const { rateLimit } = options;
  if (rateLimit === undefined || rateLimit === null) return undefined;
  if (!(rateLimit instanceof RateLimit)) throw new TypeError(`options.rateLimit must be a RateLimit, found ${kind(rateLimit)}`);
  return RateLimit.native(rateLimit);
}

/** A request's body as JSON text: the text itself, or an object written as JSON. */
function requestBody(body) {
  if (typeof body === "string") return body;
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new TypeError(`body must be a string or an object, found ${kind(body)}`);
  }
  return JSON.stringify(body);
}

/** `make()`, its error a `ManifestError`. */
function manifest(make) {
  try {
    return make();
  } catch (error) {
    throw new ManifestError(error.message);
  }
}

module.exports = { count, countAsync, cap, capAsync, Limits, RateLimit, ManifestError };
