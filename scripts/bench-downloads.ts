// `npm run bench:downloads`: release files at size. One 200 MB file (BENCH_DOWNLOAD_MB) uploaded
// through PUT /api/v1/releases/{id}/artifacts/{filename}, then downloaded by 20 clients at once
// (BENCH_DOWNLOAD_CLIENTS), each through the API's 303 and the gateway's signed link (the default
// store, DATA_DIR/artifacts, as `npm start` runs it), every byte read and hashed. Measures the
// gateway's resident memory (its growth while streaming must stay far below the file: nothing is held
// whole) and the throughput against a plain copy of the same file by the same number of readers on
// this machine, in the same run. Writes the "downloads" section of docs/benchmarks.md.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { replaceSection, rssMb, startBenchSystem } from './lib/bench-kit';
import { repoRoot } from './lib/paths';

const MB = 1024 * 1024;
const SIZE_MB = Number(process.env.BENCH_DOWNLOAD_MB ?? 200);
const CLIENTS = Number(process.env.BENCH_DOWNLOAD_CLIENTS ?? 20);
/** The limit the bench holds the gateway to: its memory may grow this much while streaming. */
const RSS_BUDGET_MB = 64;

/** A file of SIZE_MB random-looking bytes (made in 1 MB pieces, never whole in memory), and its SHA-256. */
async function makeFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  const piece = randomBytes(MB);
  let left = SIZE_MB;
  await pipeline(
    Readable.from(
      (function* () {
        while (left-- > 0) {
          // A copy each time: the writer may still hold the previous one.
          const chunk = Buffer.from(piece);
          chunk[0] = left & 0xff; // each megabyte differs
          hash.update(chunk);
          yield chunk;
        }
      })(),
    ),
    createWriteStream(path),
  );
  return hash.digest('hex');
}

/** Reads a stream to its end, hashing it: what a client does with what it downloads. */
async function drain(body: ReadableStream<Uint8Array>): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    hash.update(chunk);
  }
  return { bytes, sha256: hash.digest('hex') };
}

/** The baseline: CLIENTS readers of the same file from disk at once, each hashing, in this process. */
async function plainCopy(path: string): Promise<number> {
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, () => drain(Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>)),
  );
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  // As `npm start` runs it: log level info, so every request's access-log line is written.
  const bench = await startBenchSystem('downloads', { logLevel: 'info' });
  const { system, headers } = bench;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${system.gatewayUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const out = (await res.json()) as Record<string, any>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(out)}`);
    return out;
  };
  try {
    const file = join(bench.work, 'artifact.bin');
    const sha256 = await makeFile(file);
    const product = await api('POST', '/api/v1/products', { name: 'Bench app' });
    const release = await api('POST', `/api/v1/products/${product.id}/releases`, { version: '1.0.0' });
    const t0 = performance.now();
    const put = await fetch(`${system.gatewayUrl}/api/v1/releases/${release.id}/artifacts/app.bin?platform=any`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/octet-stream' },
      body: Readable.toWeb(createReadStream(file)) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    const uploaded = (await put.json()) as Record<string, any>;
    if (put.status !== 201 || uploaded.sha256 !== sha256)
      throw new Error(`upload: ${put.status} ${JSON.stringify(uploaded)}`);
    const uploadS = (performance.now() - t0) / 1000;
    await api('POST', `/api/v1/releases/${release.id}/publish`);
    console.log(`uploaded ${SIZE_MB} MB in ${uploadS.toFixed(1)} s`);

    const pid = system.pids.gateway!;
    const baseRss = rssMb(pid);
    let peakRss = baseRss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(pid))), 50);
    const t1 = performance.now();
    const results = await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        const link = await fetch(`${system.gatewayUrl}/api/v1/releases/${release.id}/artifacts/app.bin`, {
          headers,
          redirect: 'manual',
        });
        if (link.status !== 303) throw new Error(`download: ${link.status} ${await link.text()}`);
        // The gateway links to https (it believes the bench's X-Forwarded-Proto, as behind a TLS proxy); the
        // bench is that proxy, and reaches the gateway over plain HTTP.
        const location = link.headers.get('location')!.replace(/^https:/, 'http:');
        const res = await fetch(location, { headers: { 'x-forwarded-proto': 'https' } });
        return drain(res.body!);
      }),
    );
    const downloadS = (performance.now() - t1) / 1000;
    clearInterval(sampler);
    if (results.some((r) => r.bytes !== SIZE_MB * MB || r.sha256 !== sha256))
      throw new Error('a download was not the file');
    const copyS = await plainCopy(file);
    const totalMb = SIZE_MB * CLIENTS;
    const row = {
      gatewayMbS: totalMb / downloadS,
      copyMbS: totalMb / copyS,
      growth: peakRss - baseRss,
      baseRss,
      uploadMbS: SIZE_MB / uploadS,
    };
    console.log(
      `${CLIENTS} downloads of ${SIZE_MB} MB: ${row.gatewayMbS.toFixed(0)} MB/s through the gateway, ${row.copyMbS.toFixed(0)} MB/s plain copy (ratio ${(row.gatewayMbS / row.copyMbS).toFixed(2)}); gateway RSS ${baseRss.toFixed(0)} MB, +${row.growth.toFixed(1)} MB at peak`,
    );
    writeSection(row);
    if (row.growth >= RSS_BUDGET_MB)
      throw new Error(`the gateway grew ${row.growth.toFixed(1)} MB: over the ${RSS_BUDGET_MB} MB budget`);
  } finally {
    await bench.stop();
  }
}

function writeSection(r: {
  gatewayMbS: number;
  copyMbS: number;
  growth: number;
  baseRss: number;
  uploadMbS: number;
}): void {
  const path = join(repoRoot(), 'docs', 'benchmarks.md');
  const body = `## Release downloads (\`npm run bench:downloads\`)

One ${SIZE_MB} MB release file uploaded through the API, then downloaded by ${CLIENTS} clients at once, each through \`GET /api/v1/releases/{id}/artifacts/{filename}\` (303) and the gateway's signed link, from the default store (DATA_DIR/artifacts), every byte read and hashed by the client (the system in production mode with \`npm start\`'s log level, info, so the access log is on, on a ${cpus().length}-core machine with the clients on the same cores). The baseline is the same ${CLIENTS} readers copying the file straight from disk, hashing it, in the same run. Measured ${new Date().toISOString().slice(0, 10)}.

| | MB/s (all clients) | ratio to the plain copy |
|---|---:|---:|
| through the gateway | ${r.gatewayMbS.toFixed(0)} | **${(r.gatewayMbS / r.copyMbS).toFixed(2)}** |
| plain copy from disk | ${r.copyMbS.toFixed(0)} | 1.00 |

The gateway's resident memory grew **${r.growth.toFixed(1)} MB** while it streamed ${((SIZE_MB * CLIENTS) / 1024).toFixed(1)} GB (from ${r.baseRss.toFixed(0)} MB; the bench fails past ${RSS_BUDGET_MB} MB): a file is streamed, never held. The upload ran at ${r.uploadMbS.toFixed(0)} MB/s (counted and hashed as it streamed in).`;
  writeFileSync(path, replaceSection(readFileSync(path, 'utf8'), 'downloads', body));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
