// The official Node.js GCS client against the gcslock emulator. Run by NodeClientConformanceTest with
// EMULATOR_ENDPOINT and BUCKET set; prints one "ok <step>" line per step and exits non-zero on the first failure.
'use strict';
const { Storage } = require('@google-cloud/storage');
const { Readable } = require('stream');
const assert = require('assert');

// apiEndpoint, not STORAGE_EMULATOR_HOST: with that variable this client sends JSON API calls to /b/... without
// the /storage/v1 prefix that GCS (and the emulator) serve them under.
const bucket = new Storage({ projectId: 'test-project', apiEndpoint: process.env.EMULATOR_ENDPOINT })
  .bucket(process.env.BUCKET);

function streamOf(buffer, pieces) {
  // A stream of unknown length: the client sends one resumable PUT with Content-Range "bytes 0-*/*".
  const size = Math.ceil(buffer.length / pieces);
  let i = 0;
  return new Readable({
    read() {
      this.push(i < buffer.length ? buffer.subarray(i, (i += size)) : null);
    },
  });
}

function upload(file, buffer, options) {
  return new Promise((resolve, reject) => {
    streamOf(buffer, 7).pipe(file.createWriteStream(options)).on('error', reject).on('finish', resolve);
  });
}

async function step(name, fn) {
  await fn();
  console.log('ok ' + name);
}

(async () => {
  const content = Buffer.alloc(300 * 1024 + 17, 0);
  for (let i = 0; i < content.length; i++) content[i] = (i * 31) & 0xff;

  await step('streaming resumable upload of unknown length (bytes 0-*/*)', async () => {
    const file = bucket.file('node/streamed');
    await upload(file, content, { resumable: true });
    const [read] = await file.download();
    assert.ok(read.equals(content), 'downloaded bytes differ');
  });

  await step('resumable upload of a known length in 256 KiB chunks', async () => {
    const file = bucket.file('node/chunked');
    await upload(file, content, { resumable: true, chunkSize: 256 * 1024, metadata: { contentLength: content.length } });
    const [metadata] = await file.getMetadata();
    assert.strictEqual(Number(metadata.size), content.length);
  });

  await step('save() of a small string (the default upload)', async () => {
    await bucket.file('node/small').save('hello');
    const [read] = await bucket.file('node/small').download();
    assert.strictEqual(read.toString(), 'hello');
  });

  await step('create-if-absent with ifGenerationMatch=0 loses with 412', async () => {
    const file = bucket.file('node/small');
    await assert.rejects(file.save('again', { resumable: true, preconditionOpts: { ifGenerationMatch: 0 } }),
      (e) => e.code === 412);
    await assert.rejects(file.save('again', { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } }),
      (e) => e.code === 412);
  });

  await step('list, exists and delete', async () => {
    const [files] = await bucket.getFiles({ prefix: 'node/' });
    assert.deepStrictEqual(files.map((f) => f.name).sort(), ['node/chunked', 'node/small', 'node/streamed']);
    await bucket.file('node/streamed').delete();
    const [exists] = await bucket.file('node/streamed').exists();
    assert.strictEqual(exists, false);
  });
})().catch((e) => {
  console.error('FAILED: ' + (e && e.stack ? e.stack : JSON.stringify(e)));
  process.exit(1);
});
