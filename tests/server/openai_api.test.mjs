// ember-server as clients meet it, over real loopback HTTP: the official `openai` npm client,
// curl, fetch and raw sockets against a running `ember-server` on the bundled demo model.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import net from 'node:net';
import { startServer, stopServer, metric, cliGreedy, tools, demoModel } from './server_process.mjs';

const require = createRequire(`${process.env.EMBER_REFERENCE_DIR}/package.json`);
const OpenAI = require('openai').default;

let server;
let client;
let model;

before(async () => {
  // A context far beyond the demo model's 256 tokens, so a generation can outlast its client.
  server = await startServer(['--timeout', '2', '--ctx-size', '8192']);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  model = (await client.models.list()).data[0].id;
});

after(async () => {
  assert.equal(await stopServer(server), 0, server.log());
});

const post = (path, body, headers = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
  });

test('the model is listed under its file name', async () => {
  const list = await client.models.list();
  assert.equal(list.data.length, 1);
  assert.equal(list.data[0].id, 'ember-demo.powerinfer.gguf');
  assert.equal(list.data[0].object, 'model');
});

test('a completion is ember-cli greedy text, whole or streamed', async () => {
  const prompt = 'Once upon a time';
  const expected = await cliGreedy(prompt, 24);
  const whole = await client.completions.create({ model, prompt, max_tokens: 24, temperature: 0 });
  assert.equal(whole.choices[0].text, expected);
  assert.equal(whole.usage.completion_tokens, 24);
  assert.equal(whole.usage.total_tokens, whole.usage.prompt_tokens + 24);
  let streamed = '';
  let chunks = 0;
  for await (const chunk of await client.completions.create({ model, prompt, max_tokens: 24, temperature: 0, stream: true })) {
    streamed += chunk.choices[0]?.text ?? '';
    chunks += 1;
  }
  assert.equal(streamed, expected);
  assert.ok(chunks > 2, `the text came in ${chunks} chunks`);
});

test('a chat completion streams with its usage, the same text as unstreamed', async () => {
  const request = {
    model,
    messages: [{ role: 'system', content: 'You tell stories.' }, { role: 'user', content: 'Tell me about a dragon.' }],
    max_tokens: 20,
    temperature: 0,
  };
  const whole = await client.chat.completions.create(request);
  assert.equal(whole.object, 'chat.completion');
  assert.equal(whole.choices[0].message.role, 'assistant');
  assert.ok(whole.choices[0].message.content.length > 0);
  const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let role = null;
  let usage = null;
  let finish = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    role ??= choice.delta.role;
    text += choice.delta.content ?? '';
    finish = choice.finish_reason ?? finish;
  }
  assert.equal(role, 'assistant');
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(finish, whole.choices[0].finish_reason);
  assert.deepEqual(
    [usage.prompt_tokens, usage.completion_tokens],
    [whole.usage.prompt_tokens, whole.usage.completion_tokens],
  );
});

test('two concurrent streams each get their own text', async () => {
  const prompts = ['The old castle', 'In the morning the children'];
  const expected = await Promise.all(prompts.map((p) => cliGreedy(p, 20)));
  assert.notEqual(expected[0], expected[1]);
  const texts = await Promise.all(
    prompts.map(async (prompt) => {
      let text = '';
      for await (const c of await client.completions.create({ model, prompt, max_tokens: 20, temperature: 0, stream: true }))
        text += c.choices[0]?.text ?? '';
      return text;
    }),
  );
  assert.deepEqual(texts, expected);
});

test('a chat that grows by one turn evaluates only the new tokens', async () => {
  const messages = [{ role: 'user', content: 'Write about a quiet village by the sea.' }];
  const first = await post('/v1/chat/completions', { model, messages, max_tokens: 16, temperature: 0 }).then((r) => r.json());
  messages.push(first.choices[0].message, { role: 'user', content: 'And then?' });
  const second = await post('/v1/chat/completions', { model, messages, max_tokens: 8, temperature: 0 }).then((r) => r.json());
  const cached = second.usage.prompt_tokens_details.cached_tokens;
  // The first prompt's last token may merge with the answer's first when the text is tokenized again.
  assert.ok(cached >= first.usage.prompt_tokens - 1, `${cached} cached of ${second.usage.prompt_tokens}`);
  assert.equal(second.timings.prompt_n, second.usage.prompt_tokens - cached);
  assert.ok(second.timings.prompt_n < second.usage.prompt_tokens / 2, `${second.timings.prompt_n} prompt tokens evaluated`);
});

test('curl -N receives Server-Sent Events as they are generated', async () => {
  const curl = spawn('curl', ['-sN', `${server.url}/v1/completions`, '-H', 'Content-Type: application/json', '-d',
    JSON.stringify({ model, prompt: 'The river', max_tokens: 12, temperature: 0, stream: true })]);
  let out = '';
  curl.stdout.on('data', (d) => { out += d; });
  const [code] = await once(curl, 'exit');
  assert.equal(code, 0);
  const events = out.split('\n\n').filter((e) => e.startsWith('data: '));
  assert.equal(events.at(-1), 'data: [DONE]');
  const pieces = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)));
  // One event per token however fast they come (the demo model's tokens are whole words), and
  // the one that carries finish_reason.
  assert.equal(pieces.length, 13);
  assert.equal(pieces.map((p) => p.choices[0].text).join(''), await cliGreedy('The river', 12));
  assert.equal(pieces.at(-1).choices[0].finish_reason, 'length');
});

test('a client killed mid-stream frees the engine within a second', async () => {
  const cancelledBefore = await metric(server.url, 'requests_cancelled_total');
  const tokensBefore = await metric(server.url, 'tokens_predicted_total');
  const maxTokens = 100000;
  const curl = spawn('curl', ['-sN', `${server.url}/v1/completions`, '-H', 'Content-Type: application/json', '-d',
    JSON.stringify({ model, prompt: 'Far away', max_tokens: maxTokens, ignore_eos: true, stream: true })]);
  await new Promise((resolve) => curl.stdout.on('data', (d) => { if (String(d).includes('data: {')) resolve(); }));
  assert.equal(await metric(server.url, 'requests_processing'), 1);
  curl.kill('SIGKILL');
  const killed = Date.now();
  while ((await metric(server.url, 'requests_processing')) !== 0) {
    assert.ok(Date.now() - killed < 1000, 'the generation was still running a second after its client died');
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(await metric(server.url, 'requests_cancelled_total'), cancelledBefore + 1);
  const generated = (await metric(server.url, 'tokens_predicted_total')) - tokensBefore;
  assert.ok(generated < 8192, `${generated} tokens generated for the killed client`);
  // And the next request is served.
  const next = await client.completions.create({ model, prompt: 'Hello', max_tokens: 2 });
  assert.equal(next.usage.completion_tokens, 2);
});

test('a whole answer is cancelled too when its client leaves', async () => {
  const cancelledBefore = await metric(server.url, 'requests_cancelled_total');
  const abort = new AbortController();
  // The status comes at once; the body waits for the answer, spaces until then.
  const response = await fetch(`${server.url}/v1/completions`, {
    method: 'POST',
    signal: abort.signal,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ model, prompt: 'Far away', max_tokens: 100000, ignore_eos: true }),
  });
  assert.equal(response.status, 200);
  // fetch asks for compression; a compressed body would hold the spaces back.
  assert.equal(response.headers.get('content-encoding'), null);
  while ((await metric(server.url, 'requests_processing')) === 0) await new Promise((r) => setTimeout(r, 10));
  abort.abort();
  const left = Date.now();
  while ((await metric(server.url, 'requests_processing')) !== 0) {
    assert.ok(Date.now() - left < 1000, 'the generation was still running a second after its client left');
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(await metric(server.url, 'requests_cancelled_total'), cancelledBefore + 1);
});

test('/tokenize and /detokenize round-trip, /health and /metrics answer', async () => {
  const { tokens } = await post('/tokenize', { content: 'Hello world' }).then((r) => r.json());
  assert.ok(tokens.length >= 2 && tokens.every(Number.isInteger));
  const { content } = await post('/detokenize', { tokens }).then((r) => r.json());
  assert.equal(content.trim(), 'Hello world');
  const withBos = await post('/tokenize', { content: 'Hello world', add_special: true }).then((r) => r.json());
  assert.equal(withBos.tokens.length, tokens.length + 1);
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  for (const name of ['requests_total', 'tokens_predicted_total', 'predicted_tokens_per_second', 'device_active_neuron_share',
    'device_memory_used_bytes'])
    assert.match(metrics, new RegExp(`^# TYPE ember_${name} (counter|gauge)$`, 'm'));
});

test('bad requests get OpenAI error objects and the right status', async () => {
  const chat = (extra) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });
  const cases = [
    ['/v1/chat/completions', '{"model": ', 400, null],
    ['/v1/chat/completions', chat({ temperature: 'warm' }), 400, 'temperature'],
    ['/v1/chat/completions', chat({ model: 'gpt-4o' }), 404, 'model'],
    ['/v1/chat/completions', { model, messages: [] }, 400, 'messages'],
    ['/v1/chat/completions', chat({ max_tokens: -1 }), 400, 'max_tokens'],
    ['/v1/chat/completions', chat({ n: 1e9 }), 400, 'n'],
    ['/v1/completions', { model, prompt: 'word '.repeat(10000) }, 400, 'prompt'],
    ['/v1/completions', '['.repeat(100000), 400, null],
    ['/v1/completions', new Uint8Array([...Buffer.from('{"prompt": "'), 0xff, 0xc0, ...Buffer.from('"}')]), 400, null],
    ['/v1/completions', JSON.stringify({ prompt: 'x'.repeat(9 << 20) }), 413, null],
    ['/tokenize', { content: 5 }, 400, 'content'],
    ['/detokenize', { tokens: [1, -3] }, 400, 'tokens[1]'],
  ];
  for (const [path, body, status, param] of cases) {
    const res = await post(path, body);
    const text = await res.text();
    assert.equal(res.status, status, `${path} ${String(body).slice(0, 40)}: ${text}`);
    const { error } = JSON.parse(text);
    assert.equal(typeof error.message, 'string');
    assert.ok(error.message.length > 0);
    if (param) assert.equal(error.param, param, text);
  }
  await assert.rejects(client.chat.completions.create(chat({ model: 'nope' })), (e) => e.status === 404 && /nope/.test(e.message));
  // Still serving.
  assert.equal((await client.completions.create({ model, prompt: 'Hi', max_tokens: 1 })).usage.completion_tokens, 1);
});

test('a client that sends its headers too slowly is dropped while others are served', async () => {
  const socket = net.connect(server.port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write('POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le');
  const started = Date.now();
  let answer = '';
  socket.on('data', (d) => { answer += d; });  // read, or the socket never sees its end
  const closed = once(socket, 'close');
  const served = await client.completions.create({ model, prompt: 'Meanwhile', max_tokens: 3 });
  assert.equal(served.usage.completion_tokens, 3);
  await closed;
  const waited = Date.now() - started;
  assert.match(answer, /^HTTP\/1\.1 400 /);
  // The read timeout (2 s), then the answer's keep-alive (as long again).
  assert.ok(waited >= 1500 && waited < 6000, `dropped after ${waited} ms (timeout 2 s)`);
});

test('an API key is required when set, except for /health', async () => {
  const keyed = await startServer(['--api-key', 'sesame']);
  try {
    const body = { prompt: 'Hi', max_tokens: 1 };
    const denied = await fetch(`${keyed.url}/v1/completions`, { method: 'POST', body: JSON.stringify(body) });
    assert.equal(denied.status, 401);
    assert.equal((await denied.json()).error.type, 'authentication_error');
    const wrong = new OpenAI({ baseURL: `${keyed.url}/v1`, apiKey: 'open', maxRetries: 0 });
    await assert.rejects(wrong.models.list(), (e) => e.status === 401);
    const right = new OpenAI({ baseURL: `${keyed.url}/v1`, apiKey: 'sesame', maxRetries: 0 });
    assert.equal((await right.completions.create({ model, ...body })).usage.completion_tokens, 1);
    assert.equal((await fetch(`${keyed.url}/health`)).status, 200);
  } finally {
    await stopServer(keyed);
  }
});

test('a public address without an API key is refused at start', async () => {
  const proc = spawn(`${tools}/ember-server`, ['-m', demoModel, '--host', '0.0.0.0', '--port', '0']);
  let err = '';
  proc.stderr.on('data', (d) => { err += d; });
  const [code] = await once(proc, 'exit');
  assert.equal(code, 1);
  assert.match(err, /--host 0\.0\.0\.0.*--api-key/);
});
