// Calls Retrieve and Query on a running `ragstream serve`, with stubs built from proto/
// at run time, and prints what it got as JSON on stdout.
// Usage: node client.js HOST:PORT WORKSPACE QUESTION
"use strict";
const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const [address, workspace, question] = process.argv.slice(2);
const protoRoot = path.resolve(__dirname, "../../../proto");
const definition = protoLoader.loadSync(
  ["ragstream/v1/query.proto", "ragstream/v1/ingest.proto"],
  { includeDirs: [protoRoot], keepCase: true, longs: String, enums: String, defaults: true },
);
const v1 = grpc.loadPackageDefinition(definition).ragstream.v1;
const client = new v1.QueryService(address, grpc.credentials.createInsecure());

function call(method, request) {
  return new Promise((resolve, reject) => {
    client[method](request, { deadline: Date.now() + 30000 }, (err, reply) =>
      err ? reject(err) : resolve(reply),
    );
  });
}

async function main() {
  const params = { mode: "QUERY_MODE_NAIVE", chunk_top_k: 5 };
  const request = { workspace, query: question, params };
  const retrieved = await call("Retrieve", request);
  const answered = await call("Query", request);
  const chunks = (reply) => reply.context.chunks.map((c) => ({ chunk_id: c.chunk_id, doc_id: c.doc_id }));
  process.stdout.write(
    JSON.stringify({
      retrieve: { chunks: chunks(retrieved), mode: retrieved.mode },
      query: { chunks: chunks(answered), answer: answered.answer },
    }),
  );
  client.close();
}

main().catch((err) => {
  process.stderr.write(`${err.code}: ${err.details || err.message}\n`);
  process.exit(1);
});
