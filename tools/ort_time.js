// ONNX Runtime's CPU engine timed on one model at the batch of an export_torchvision.py reference,
// for tools/bench_transformers.py and tools/bench_cpu_peers.py. Prints one JSON object.
//
//   NODE_PATH=DIR/node_modules node tools/ort_time.js MODEL.onnx BATCH THREADS RUNS WARMUP SPIN [PROFILE]
//
// PROFILE: a path prefix in an existing directory; ONNX Runtime's own profiler then records every
// run (warm-up too) and writes its JSON trace to PROFILE_<date>.json (it slows the runs: the median
// is then not for comparison).
// onnxruntime-node is npm's package of ONNX Runtime (Debian has none); its linux-x64 library is the
// CPU engine. --ignore-scripts at install skips its postinstall, which only fetches CUDA binaries:
//   npm install --prefix DIR --ignore-scripts --no-audit --no-fund onnxruntime-node@1.30.0
// The output is checked against the reference, so that a wrong run is never timed unnoticed.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function floats(path) {
    const b = fs.readFileSync(path);
    return new Float32Array(b.buffer, b.byteOffset, b.length / 4);
}

(async () => {
    const [model, batch, threads, runs, warmup, spin, profile] = process.argv.slice(2);
    const stem = model.replace(/\.onnx$/, '');
    const manifest = JSON.parse(fs.readFileSync(stem + '.json'));
    const reference = manifest.cases.find((c) => c.batch === Number(batch));
    if (!reference)
        throw new Error(`${stem}.json has no batch ${batch}`);
    const dir = require('path').dirname(model);
    const session = await ort.InferenceSession.create(model, {
        executionProviders: ['cpu'], intraOpNumThreads: Number(threads), interOpNumThreads: 1,
        graphOptimizationLevel: 'all', executionMode: 'sequential',
        extra: {session: {intra_op: {allow_spinning: spin}}},
        ...(profile ? {enableProfiling: true, profileFilePrefix: profile} : {}),
    });
    const input = new ort.Tensor('float32', floats(`${dir}/${reference.input}`), reference.input_shape);
    const want = floats(`${dir}/${reference.output}`);
    const times = [];
    let got = null;
    for (let i = 0; i < Number(warmup) + Number(runs); ++i) {
        const start = process.hrtime.bigint();
        const out = await session.run({[session.inputNames[0]]: input});
        const ms = Number(process.hrtime.bigint() - start) / 1e6;
        if (i >= Number(warmup))
            times.push(ms);
        got = out[session.outputNames[0]].data;
    }
    let maxDiff = 0, maxRef = 0;
    for (let i = 0; i < want.length; ++i) {
        maxDiff = Math.max(maxDiff, Math.abs(got[i] - want[i]));
        maxRef = Math.max(maxRef, Math.abs(want[i]));
    }
    if (profile)
        session.endProfiling();
    times.sort((a, b) => a - b);
    console.log(JSON.stringify({
        version: ort.env.versions.common || ort.env.versions.node,
        median_ms: times[Math.floor((times.length - 1) / 2)], min_ms: times[0],
        relative_error: maxDiff / maxRef,
    }));
})().catch((e) => {
    console.error(`ort_time: ${e.message}`);
    process.exit(1);
});
