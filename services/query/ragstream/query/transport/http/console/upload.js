// Uploads: files dropped on the Documents tab or picked with its file input, each sent to
// /v1/documents/upload, where the server converts it as `ragstream ingest` does and
// publishes it; each is listed with what the index will do with it, or why it was refused.
// A file's version is its modification time in nanoseconds, as `ragstream ingest` gives
// it, so sending the same file again is a duplicate and an edited one replaces it; an older
// file than the indexed version is refused as stale unless sent with "replace".
import { el, postForm } from "./api.js";

const OUTCOMES = {
  PUBLISH_OUTCOME_ACCEPTED: ["accepted", "indexing follows"],
  PUBLISH_OUTCOME_DUPLICATE: ["duplicate", "the index already holds this content"],
  PUBLISH_OUTCOME_STALE: ["stale", "the index holds a newer version: \"replace\" on its row sends this one"],
  PUBLISH_OUTCOME_DELETED: ["deleted", "a newer delete stands; this upload is ignored"],
  PUBLISH_OUTCOME_NOT_FOUND: ["not found", ""],
};

function describe(file, reply) {
  const [result] = reply.results;
  const [outcome, meaning] = OUTCOMES[result.outcome] || [result.outcome, ""];
  const found = reply.converted;
  const pages = found.pages ? `, ${found.pages} page${found.pages === 1 ? "" : "s"}` : "";
  const what = `${found.format}${pages}, ${found.characters} characters`;
  const name = result.docId === file.name ? file.name : `${file.name} → ${result.docId}`;
  return `${name}: ${outcome}${meaning ? ` (${meaning})` : ""}; ${what}`;
}

function report(file, text, kind) {
  const list = document.getElementById("upload-results");
  const item = el("li", { class: kind, "data-file": file.name }, text);
  list.prepend(item);
  return item;
}

const nanoseconds = (ms) => BigInt(ms) * 1000000n;

// Whether to send the file again above the stored version, as `ragstream ingest` does: a
// file uploaded after a delete of its document is wanted back, and "replace" on a row asks
// for this file to be the document whatever version the index holds.
function overrides(result, replacing) {
  const outcome = result.outcome;
  return outcome === "PUBLISH_OUTCOME_DELETED" || (replacing && outcome === "PUBLISH_OUTCOME_STALE");
}

async function send(file, docId) {
  const fields = { file, version: nanoseconds(file.lastModified).toString() };
  if (docId) fields.doc_id = docId;
  try {
    let reply = await postForm("/v1/documents/upload", fields);
    if (overrides(reply.results[0], Boolean(docId))) {
      const above = BigInt(reply.results[0].storedVersion) + 1n;
      const now = nanoseconds(Date.now());
      fields.version = (above > now ? above : now).toString();
      reply = await postForm("/v1/documents/upload", fields);
    }
    const outcome = reply.results[0].outcome.replace("PUBLISH_OUTCOME_", "").toLowerCase();
    report(file, describe(file, reply), `outcome-${outcome}`);
  } catch (error) {
    const text = error.message.includes(file.name) ? error.message : `${file.name}: ${error.message}`;
    report(file, text, "error");
  }
}

// Sends `files` one after the other (as `docId` when given: a new version of that
// document), then calls `done` so the status list follows the indexing.
export async function uploadFiles(files, done, docId = "") {
  for (const file of files) await send(file, docId);
  done();
}

export function initUpload(done) {
  const input = document.getElementById("upload-files");
  input.addEventListener("change", async () => {
    const files = [...input.files];
    input.value = ""; // picking the same file again is a change too
    await uploadFiles(files, done);
  });
  const zone = document.getElementById("documents");
  zone.addEventListener("dragover", (event) => {
    event.preventDefault(); // lets the drop happen here instead of opening the file
    zone.classList.add("dropping");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("dropping"));
  zone.addEventListener("drop", async (event) => {
    event.preventDefault();
    zone.classList.remove("dropping");
    await uploadFiles([...event.dataTransfer.files], done);
  });
}
