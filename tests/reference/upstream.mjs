// Upstream llama.cpp's answers for a model (through node-llama-cpp's prebuilt CPU library), as
// JSON on stdout: what Ember's tests compare against. Test use only.
//
//   node upstream.mjs MODEL.gguf REQUEST.json
//
// REQUEST: {"texts": [...], "prompts": [...], "n_predict": 32, "top": 20, "threads": 2}
//   texts:   tokenized as the model is fed them: control-token text kept as characters, BOS
//            prepended where the vocabulary asks for it
//   prompts: tokenized the same way, evaluated from an empty context in one batch, then: the
//            `top` most likely next tokens with their log-probabilities (the full softmax of the
//            logits), the greedy continuation of n_predict tokens (evaluated one at a time), and
//            for each of its steps the two most likely tokens with their log-probabilities
import {readFileSync} from "node:fs";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const [modelPath, requestPath] = process.argv.slice(2);
if (!modelPath || !requestPath) {
    console.error("usage: node upstream.mjs MODEL.gguf REQUEST.json");
    process.exit(2);
}
const request = JSON.parse(readFileSync(requestPath, "utf8"));
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
// Read into memory, not mapped: this VM evicts mapped pages.
const model = await llama.loadModel({modelPath, useMmap: false, gpuLayers: 0});

const fed = (text) => {
    const ids = model.tokenize(text, false);
    return model.tokens.shouldPrependBosToken ? [model.tokens.bos, ...ids] : ids;
};

const result = {tokenized: (request.texts ?? []).map(fed), prompts: []};
const nPredict = request.n_predict ?? 32;
const topN = request.top ?? 20;
const context = await model.createContext({contextSize: request.n_ctx ?? 512, threads: request.threads ?? 2});
const everything = {temperature: 1, topK: 0, topP: 1, minP: 0};
const ranked = (probabilities, n) => [...probabilities.entries()].slice(0, n).map(([id, p]) => [id, Math.log(p)]);
const sequence = context.getSequence();
const withDistribution = (t) => [t, {generateNext: {probabilities: true, options: everything}}];
for (const prompt of request.prompts ?? []) {
    await sequence.clearHistory();
    const tokens = fed(prompt);
    // The prompt in one batch, then one token at a time, as a chat generates: the greedy token
    // is the most likely one, fed back.
    const evaluated = await sequence.controlledEvaluate(tokens.map((t, i) => i + 1 < tokens.length ? t : withDistribution(t)));
    let probabilities = evaluated[tokens.length - 1].next.probabilities;
    const top = ranked(probabilities, topN);
    const greedy = [], steps = [];
    while (greedy.length < nPredict) {
        const best = ranked(probabilities, 2);
        steps.push(best);
        greedy.push(best[0][0]);
        if (greedy.length < nPredict)
            probabilities = (await sequence.controlledEvaluate([withDistribution(best[0][0])]))[0].next.probabilities;
    }
    result.prompts.push({tokens, top, greedy, steps});
}
process.stdout.write(JSON.stringify(result) + "\n");
