// Query tab: StreamQuery over server-sent events; the answer grows as deltas arrive, then
// the context (chunks with their reference ids, entities, relations), references, timings.
import { el, showError, stream } from "./api.js";

const byId = (id) => document.getElementById(id);

function params() {
  const number = (id) => {
    const value = byId(id).value;
    return value === "" ? undefined : Number(value);
  };
  return {
    mode: byId("mode").value,
    topK: number("top-k"),
    chunkTopK: number("chunk-top-k"),
    maxTotalTokens: number("max-total-tokens"),
    onlyNeedContext: byId("only-context").checked,
  };
}

function showContext(retrieval) {
  const context = retrieval.context || {};
  const chunks = context.chunks || [];
  byId("chunk-count").textContent = `(${chunks.length})`;
  byId("context-chunks").replaceChildren(
    ...chunks.map((c) =>
      el(
        "div",
        { class: "chunk" },
        el("div", { class: "chunk-head" }, `[${c.referenceId}] ${c.filePath || c.docId}`),
        el("div", { class: "chunk-text" }, c.content),
      ),
    ),
  );
  const entities = context.entities || [];
  byId("entity-hits").textContent = `(${entities.length})`;
  byId("context-entities").replaceChildren(
    ...entities.map((e) => el("li", {}, el("b", {}, e.name), ` (${e.type}) ${e.description}`)),
  );
  const relations = context.relations || [];
  byId("relation-hits").textContent = `(${relations.length})`;
  byId("context-relations").replaceChildren(
    ...relations.map((r) => el("li", {}, el("b", {}, `${r.source} — ${r.target}`), ` ${r.description}`)),
  );
  byId("references").replaceChildren(
    ...(retrieval.references || []).map((r) =>
      el("li", { value: r.referenceId, "data-doc": r.docId }, r.filePath || r.docId),
    ),
  );
  byId("notes").textContent = (retrieval.notes || []).join("; ");
}

function showTimings(timings) {
  byId("timings").tBodies[0].replaceChildren(
    ...timings.map((t) =>
      el("tr", {}, el("td", {}, t.stage), el("td", { class: "num" }, `${t.durationMs.toFixed(1)} ms`)),
    ),
  );
}

async function ask(event) {
  event.preventDefault();
  const answer = byId("answer");
  answer.textContent = "";
  delete answer.dataset.done;
  answer.classList.add("busy");
  byId("ask").disabled = true;
  showError(null);
  try {
    await stream("/v1/query/stream", { query: byId("question").value, params: params() }, (name, data) => {
      if (name === "context") showContext(data.context);
      else if (name === "delta") answer.textContent += data.delta;
      else if (name === "end") showTimings(data.end.timings);
      else if (name === "error") throw new Error(data.message);
    });
    answer.dataset.done = "true";
  } catch (error) {
    showError(error);
  } finally {
    answer.classList.remove("busy");
    byId("ask").disabled = false;
  }
}

// Empties the answer, its context, references, notes and timings.
export function clearQuery() {
  const answer = byId("answer");
  answer.textContent = "";
  delete answer.dataset.done;
  for (const id of ["chunk-count", "entity-hits", "relation-hits", "notes"]) byId(id).textContent = "";
  for (const id of ["context-chunks", "context-entities", "context-relations", "references"]) {
    byId(id).replaceChildren();
  }
  byId("timings").tBodies[0].replaceChildren();
}

export function initQuery() {
  byId("query-form").addEventListener("submit", ask);
}
