// Upstream llama.cpp's speed on a model (node-llama-cpp's prebuilt CPU library), for
// BENCHMARKS.md: prompt processing (pp: n_prompt tokens in one batch) and generation (tg:
// n_gen tokens one at a time, greedy), each repeated and reported as the median tokens/s.
//
//   node bench.mjs MODEL.gguf [n_prompt=512] [n_gen=128] [threads=2] [repeats=3]
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const [modelPath, nPrompt = "512", nGen = "128", threads = "2", repeats = "3"] = process.argv.slice(2);
if (!modelPath) {
    console.error("usage: node bench.mjs MODEL.gguf [n_prompt] [n_gen] [threads] [repeats]");
    process.exit(2);
}
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
// Read into memory, not mapped, as ember-bench does: this VM evicts mapped pages.
const model = await llama.loadModel({modelPath, useMmap: false, gpuLayers: 0});
const context = await model.createContext({contextSize: Number(nPrompt) + Number(nGen) + 16, batchSize: Number(nPrompt),
                                           threads: Number(threads)});
const sequence = context.getSequence();
const vocab = model.tokens;
// Token ids from the middle of the vocabulary, as llama-bench's random prompt.
const prompt = Array.from({length: Number(nPrompt)}, (_, i) => 1000 + (i * 7919) % 20000);
const median = (v) => v.slice().sort((a, b) => a - b)[Math.floor(v.length / 2)];
const pp = [], tg = [];
for (let r = 0; r < Number(repeats); ++r) {
    await sequence.clearHistory();
    let t0 = performance.now();
    await sequence.controlledEvaluate(prompt);
    pp.push(Number(nPrompt) / ((performance.now() - t0) / 1000));
    await sequence.clearHistory();
    await sequence.controlledEvaluate([vocab.bos ?? 1]);
    let n = 0;
    t0 = performance.now();
    for await (const _ of sequence.evaluate([prompt[0]], {temperature: 0})) {
        if (++n >= Number(nGen)) break;
    }
    tg.push(n / ((performance.now() - t0) / 1000));
}
console.log(JSON.stringify({model: modelPath, threads: Number(threads), pp: median(pp), tg: median(tg), pp_runs: pp, tg_runs: tg}));
