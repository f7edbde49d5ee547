// The three structures no cut of the shape fits, under a limit of 100: an object of 500 short
// fields, small objects nested with no list, and a list of one such object.

const fields = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`field_${i}`, i]));
let nested = { leaf: 0 };
for (let depth = 1; depth < 120; depth++) nested = { depth, flag: true, inner: nested };

export const NO_FIT = {
  "500 short fields": fields,
  "nested small objects": nested,
  "a list of one huge item": [fields],
};
