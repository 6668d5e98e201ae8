// Documents tab: indexing progress, graph counts, and every document with its status.
import { el, get, showError } from "./api.js";

const PAGE = 100;
const STATE_NAMES = {
  DOCUMENT_STATE_PENDING: "pending",
  DOCUMENT_STATE_PROCESSING: "processing",
  DOCUMENT_STATE_PROCESSED: "processed",
  DOCUMENT_STATE_FAILED: "failed",
  DOCUMENT_STATE_DELETED: "deleted",
};
let nextToken = "";
let shown = [];

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
  );
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
  document.getElementById("more-documents").hidden = true;
  for (const id of ["pending-documents", "pending-merges", "entity-count", "relation-count"]) {
    document.getElementById(id).textContent = "–";
  }
}

export function initDocuments() {
  document.getElementById("more-documents").addEventListener("click", () => {
    loadPage(false).catch(showError);
  });
  // While indexing is under way, follow it; stop polling once the index is current.
  const poll = async () => {
    if (document.getElementById("documents").hidden) return;
    const progress = await refreshDocuments();
    const busy = progress && (progress.pendingDocumentEvents !== "0" || progress.pendingGraphMerges !== "0");
    if (busy) setTimeout(poll, 2000);
  };
  return poll;
}
