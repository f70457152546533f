// A bounded load on ember-server over loopback: for each concurrency level, that many clients
// send streamed completions back to back until `--requests` have been sent; prints requests/s and
// the time to first token (p50, p99) per level, and exits non-zero if any request failed, was
// lost, or came back with fewer tokens than asked.
//   node tests/server/load.mjs [--url URL] [--requests N] [--levels 1,4,16] [--max-tokens N]
// Without --url it starts its own ember-server on the demo model (EMBER_TOOLS_DIR, EMBER_DEMO_MODEL).
import { startServer, stopServer } from './server_process.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const requests = Number(arg('requests', 64));
const levels = arg('levels', '1,4,16').split(',').map(Number);
const maxTokens = Number(arg('max-tokens', 16));
const prompts = ['Once upon a time', 'The old castle', 'In the morning', 'Far away', 'The river', 'A small dog'];

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

// One streamed completion; resolves with its time to first token and its token count.
async function one(url, i) {
  const start = performance.now();
  const res = await fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ prompt: prompts[i % prompts.length], max_tokens: maxTokens, ignore_eos: true,
      temperature: 0, stream: true, stream_options: { include_usage: true } }),
  });
  if (res.status !== 200) throw new Error(`request ${i}: HTTP ${res.status}: ${await res.text()}`);
  let first = null;
  let buffer = '';
  let usage = null;
  let done = false;
  const decoder = new TextDecoder();
  for await (const bytes of res.body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!event.startsWith('data: ')) continue;
      if (event === 'data: [DONE]') { done = true; continue; }
      const chunk = JSON.parse(event.slice(6));
      if (chunk.error) throw new Error(`request ${i}: ${chunk.error.message}`);
      if (chunk.usage) usage = chunk.usage;
      if (first === null && chunk.choices[0]?.text) first = performance.now() - start;
    }
  }
  if (!done) throw new Error(`request ${i}: the stream ended without [DONE]`);
  if (!usage || usage.completion_tokens !== maxTokens)
    throw new Error(`request ${i}: ${usage?.completion_tokens} tokens instead of ${maxTokens}`);
  return first;
}

async function level(url, clients) {
  let next = 0;
  const ttft = [];
  const start = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < requests) ttft.push(await one(url, next++));
  }));
  const seconds = (performance.now() - start) / 1000;
  if (ttft.length !== requests) throw new Error(`${ttft.length} of ${requests} requests came back`);
  ttft.sort((a, b) => a - b);
  return { clients, requests, seconds, rps: requests / seconds, p50: percentile(ttft, 50), p99: percentile(ttft, 99) };
}

const own = arg('url', null) ? null : await startServer();
const url = arg('url', own?.url);
let failed = false;
try {
  console.log(`${requests} streamed completions of ${maxTokens} tokens per level against ${url}`);
  console.log('| clients | requests/s | TTFT p50 (ms) | TTFT p99 (ms) |');
  console.log('|---:|---:|---:|---:|');
  for (const clients of levels) {
    const r = await level(url, clients);
    console.log(`| ${clients} | ${r.rps.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} |`);
  }
} catch (e) {
  console.error(`load test failed: ${e.message}`);
  failed = true;
} finally {
  if (own) await stopServer(own);
}
process.exit(failed ? 1 : 0);
