// Documents tab: indexing progress, graph counts, and every document with its status;
// uploads (upload.js), deletes, and replacing a document by a new version of its file.
// While work is queued or a document is being indexed, the tab polls every POLL_MS.
import { el, get, post, showError } from "./api.js";
import { initUpload, uploadFiles } from "./upload.js";

const PAGE = 100;
const POLL_MS = 1500;
const ARMED_MS = 5000;
const STATE_NAMES = {
  DOCUMENT_STATE_PENDING: "pending",
  DOCUMENT_STATE_PROCESSING: "processing",
  DOCUMENT_STATE_PROCESSED: "processed",
  DOCUMENT_STATE_FAILED: "failed",
  DOCUMENT_STATE_DELETED: "deleted",
};
let nextToken = "";
let shown = [];
let following = null;
const armed = new Set(); // documents whose delete button was clicked once: a second click deletes
let replacing = "";

function row(doc) {
  const state = STATE_NAMES[doc.state] || doc.state;
  return el(
    "tr",
    { class: `state-${state}`, "data-doc": doc.docId },
    el("td", {}, doc.docId),
    el("td", {}, state),
    el("td", { class: "num" }, doc.chunkCount),
    el("td", { class: "num" }, doc.entityCount),
    el("td", { class: "num" }, doc.relationCount),
    el("td", { class: "num" }, `${Math.round(doc.processingMs)} ms`),
    el("td", {}, doc.updatedAt ? new Date(doc.updatedAt).toLocaleString() : ""),
    el("td", { class: "error" }, doc.error || ""),
    el("td", { class: "actions" }, ...actions(doc.docId, state)),
  );
}

function actions(docId, state) {
  if (state === "deleted") return [];
  const replace = el("button", { class: "replace", title: "upload a new version of this document" }, "replace");
  replace.addEventListener("click", () => {
    replacing = docId;
    document.getElementById("replace-file").click();
  });
  const remove = el("button", { class: "delete" }, armed.has(docId) ? "confirm delete" : "delete");
  remove.addEventListener("click", () => deleteOrArm(docId, remove));
  return [replace, remove];
}

async function deleteOrArm(docId, button) {
  if (!armed.has(docId)) {
    armed.add(docId);
    button.textContent = "confirm delete";
    setTimeout(() => armed.delete(docId), ARMED_MS);
    return;
  }
  armed.delete(docId);
  try {
    const reply = await post("/v1/documents/delete", { docIds: [docId] });
    const outcome = reply.results[0].outcome.replace("PUBLISH_OUTCOME_", "").toLowerCase();
    notify(`delete ${docId}: ${outcome}`);
    follow();
  } catch (error) {
    showError(error);
  }
}

function notify(text) {
  const item = el("li", { class: "note" }, text);
  document.getElementById("upload-results").prepend(item);
}

function summarize() {
  const byState = {};
  let chunks = 0;
  for (const doc of shown) {
    const state = STATE_NAMES[doc.state] || doc.state;
    byState[state] = (byState[state] || 0) + 1;
    chunks += doc.chunkCount;
  }
  const parts = Object.entries(byState).map(([state, n]) => `${n} ${state}`);
  document.getElementById("document-summary").textContent =
    `${shown.length} documents (${parts.join(", ") || "none"}), ${chunks} chunks`;
}

async function loadPage(reset) {
  if (reset) {
    nextToken = "";
    shown = [];
    document.querySelector("#document-table tbody").replaceChildren();
  }
  const page = await get("/v1/documents/list", { pageSize: PAGE, pageToken: nextToken });
  shown = shown.concat(page.documents);
  document.querySelector("#document-table tbody").append(...page.documents.map(row));
  nextToken = page.nextPageToken;
  document.getElementById("more-documents").hidden = !nextToken;
  summarize();
}

async function refreshCounts() {
  const progress = await get("/v1/indexing-progress");
  document.getElementById("pending-documents").textContent = progress.pendingDocumentEvents;
  document.getElementById("pending-merges").textContent = progress.pendingGraphMerges;
  const stats = await get("/v1/graph/stats", { top: 1 });
  document.getElementById("entity-count").textContent = stats.entityCount;
  document.getElementById("relation-count").textContent = stats.relationCount;
  return progress;
}

export async function refreshDocuments() {
  try {
    const progress = await refreshCounts();
    await loadPage(true);
    showError(null);
    return progress;
  } catch (error) {
    showError(error);
    return null;
  }
}

// Empties the table, the summary and the counts.
export function clearDocuments() {
  nextToken = "";
  shown = [];
  document.querySelector("#document-table tbody").replaceChildren();
  document.getElementById("document-summary").textContent = "";
  document.getElementById("upload-results").replaceChildren();
  document.getElementById("more-documents").hidden = true;
  for (const id of ["pending-documents", "pending-merges", "entity-count", "relation-count"]) {
    document.getElementById(id).textContent = "–";
  }
}

function busy(progress) {
  if (!progress) return false;
  const queued = progress.pendingDocumentEvents !== "0" || progress.pendingGraphMerges !== "0";
  const working = shown.some((doc) => ["pending", "processing"].includes(STATE_NAMES[doc.state]));
  return queued || working;
}

// Refreshes now, then every POLL_MS while indexing is under way and the tab is shown; stops
// once the index is current. One loop at a time, however often it is asked for.
export function follow() {
  clearTimeout(following);
  const poll = async () => {
    following = null;
    if (document.getElementById("documents").hidden) return;
    const progress = await refreshDocuments();
    if (busy(progress)) following = setTimeout(poll, POLL_MS);
  };
  return poll();
}

export function initDocuments() {
  document.getElementById("more-documents").addEventListener("click", () => {
    loadPage(false).catch(showError);
  });
  const replaceInput = document.getElementById("replace-file");
  replaceInput.addEventListener("change", async () => {
    const files = [...replaceInput.files];
    replaceInput.value = "";
    if (files.length) await uploadFiles(files.slice(0, 1), follow, replacing);
  });
  initUpload(follow);
  return follow;
}
