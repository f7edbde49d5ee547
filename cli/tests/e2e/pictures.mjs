// Images for the end-to-end tests: a PNG's size from its header, a PNG opened (every chunk's CRC,
// its pixel rows inflated), the providers' published prices, and PNGs made to a size.

import assert from "node:assert/strict";
import zlib from "node:zlib";

/** A PNG's or a JPEG's width and height, from its header. */
export function imageSize(bytes) {
  if (bytes.toString("latin1", 1, 4) === "PNG") return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
  for (let at = 2; at + 9 < bytes.length; at += 2 + bytes.readUInt16BE(at + 2)) {
    const marker = bytes[at + 1];
    if (marker >= 0xc0 && marker <= 0xc3) return [bytes.readUInt16BE(at + 7), bytes.readUInt16BE(at + 5)];
  }
  throw new Error("neither a PNG nor a JPEG");
}

/**
 * Opens a PNG: every chunk's CRC holds, and its pixel data inflates to the rows its header
 * says (a filter byte and the bytes of each row). Throws for a PNG that does not decode.
 */
export function openPng(bytes) {
  const [width, height] = imageSize(bytes);
  const [depth, color] = [bytes[24], bytes[25]];
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[color];
  const idat = [];
  for (let at = 8; at < bytes.length; ) {
    const length = bytes.readUInt32BE(at);
    const chunk = bytes.subarray(at + 4, at + 8 + length);
    assert.equal(zlib.crc32(chunk), bytes.readUInt32BE(at + 8 + length), "a PNG chunk's CRC");
    if (chunk.toString("latin1", 0, 4) === "IDAT") idat.push(chunk.subarray(4));
    at += 12 + length;
  }
  const pixels = zlib.inflateSync(Buffer.concat(idat));
  assert.equal(pixels.length, height * (1 + Math.ceil((width * channels * depth) / 8)), "the PNG's rows");
}

/** Anthropic's price of an image (docs.claude.com, "Vision"): a long edge of at most 1568 px, area / 750, at most 1640. */
export function anthropicTokens([width, height]) {
  const scale = Math.min(1, 1568 / Math.max(width, height));
  const [w, h] = [Math.max(1, Math.floor(width * scale)), Math.max(1, Math.floor(height * scale))];
  return Math.min(Math.ceil((w * h) / 750), 1640);
}

/**
 * OpenAI's price of an image for its tile models (platform.openai.com, "Images and vision"):
 * within 2048 x 2048, then the short side down to 768; 85, and 170 for each 512-px tile.
 */
export function openaiTileTokens([width, height]) {
  let scale = Math.min(1, 2048 / Math.max(width, height));
  let [w, h] = [Math.floor(width * scale), Math.floor(height * scale)];
  scale = Math.min(1, 768 / Math.min(w, h));
  [w, h] = [Math.floor(w * scale), Math.floor(h * scale)];
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/**
 * A `width` x `height` RGB PNG that looks like a page of text: dark runs on white lines, laid out
 * from `seed`, so that each seed gives other bytes.
 */
export function pagePng(width, height, seed) {
  const rows = Buffer.alloc(height * (1 + 3 * width), 255);
  let state = seed * 2654435761 + 1;
  const next = () => (state = (state * 1103515245 + 12345) >>> 0) / 2 ** 32;
  for (let line = 20; line + 14 < height; line += 22) {
    for (let x = 24; x < width - 24; ) {
      const word = 8 + Math.floor(next() * 60);
      for (let y = line; y < line + 12; y++) {
        const row = y * (1 + 3 * width) + 1;
        for (let i = x; i < Math.min(x + word, width - 24); i++) rows.fill(next() < 0.55 ? 40 : 255, row + 3 * i, row + 3 * i + 3);
      }
      x += word + 7;
    }
  }
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", header), chunk("IDAT", zlib.deflateSync(rows)), chunk("IEND", Buffer.alloc(0))]);
}
