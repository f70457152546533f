// Starts `ember-server` on a free port and stops it; shared by the API tests and the load test.
import { spawn } from 'node:child_process';
import { once } from 'node:events';

export const tools = process.env.EMBER_TOOLS_DIR;
export const demoModel = process.env.EMBER_DEMO_MODEL;

// Resolves once the model is served, with { url, port, proc, log() }.
export async function startServer(args = []) {
  const proc = spawn(`${tools}/ember-server`, ['-m', demoModel, '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  let stdout = '';
  const port = await new Promise((resolve, reject) => {
    proc.stdout.on('data', (d) => {
      stdout += d;
      const line = stdout.split('\n');
      if (line.length > 1) resolve(Number(line[0]));
    });
    proc.on('exit', (code) => reject(new Error(`ember-server exited with ${code}: ${stderr}`)));
  });
  return { port, url: `http://127.0.0.1:${port}`, proc, log: () => stderr };
}

export async function stopServer(server) {
  if (server.proc.exitCode !== null) return server.proc.exitCode;
  server.proc.kill('SIGTERM');
  const [code] = await once(server.proc, 'exit');
  return code;
}

// The value of one Prometheus metric from GET /metrics.
export async function metric(url, name) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = text.match(new RegExp(`^ember_${name} (\\S+)$`, 'm'));
  if (!m) throw new Error(`no metric ember_${name} in:\n${text}`);
  return Number(m[1]);
}

// The text ember-cli generates greedily for `prompt` (its stdout is the prompt, then the text).
export async function cliGreedy(prompt, n) {
  const proc = spawn(`${tools}/ember-cli`, ['-m', demoModel, '-p', prompt, '-n', String(n), '--temp', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  const [code] = await once(proc, 'exit');
  if (code !== 0) throw new Error(`ember-cli exited with ${code}`);
  if (!out.startsWith(prompt)) throw new Error(`ember-cli's output does not start with the prompt: ${out}`);
  return out.slice(prompt.length);
}
