// The console's entry point: tabs, the workspace and token fields (kept for this browser
// tab only, in sessionStorage), and each tab's first load.
import { initDocuments } from "./documents.js";
import { initExplorer, refreshTop } from "./explorer.js";
import { initQuery } from "./query.js";

function remember(id) {
  const input = document.getElementById(id);
  const params = new URLSearchParams(location.search);
  input.value = params.get(id) ?? sessionStorage.getItem(`ragstream.${id}`) ?? "";
  input.addEventListener("change", () => sessionStorage.setItem(`ragstream.${id}`, input.value));
}

function show(tab, loaders) {
  for (const button of document.querySelectorAll("#tabs button")) {
    button.classList.toggle("active", button.dataset.tab === tab);
  }
  for (const section of document.querySelectorAll("main > section")) section.hidden = section.id !== tab;
  loaders[tab]?.();
}

document.addEventListener("DOMContentLoaded", () => {
  remember("workspace");
  remember("token");
  const poll = initDocuments();
  initQuery();
  initExplorer();
  const loaders = { documents: poll, graph: refreshTop };
  for (const button of document.querySelectorAll("#tabs button")) {
    button.addEventListener("click", () => show(button.dataset.tab, loaders));
  }
  for (const id of ["workspace", "token"]) {
    document.getElementById(id).addEventListener("change", () => {
      const active = document.querySelector("#tabs button.active").dataset.tab;
      show(active, loaders);
    });
  }
  const first = new URLSearchParams(location.search).get("tab") || "documents";
  show(first, loaders);
});
