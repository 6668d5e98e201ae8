// The console's entry point: tabs, the workspace and token fields (kept for this browser
// tab only, in sessionStorage), and each tab's first load. The workspace may also come from
// the URL (`?workspace=demo`); the token never does, as URLs end up in the browser's
// history, in bookmarks and in servers' logs.
import { onAuthError, showError } from "./api.js";
import { clearDocuments, initDocuments } from "./documents.js";
import { clearExplorer, initExplorer, refreshTop } from "./explorer.js";
import { clearQuery, initQuery } from "./query.js";

function remember(id, fromUrl) {
  const input = document.getElementById(id);
  const params = new URLSearchParams(location.search);
  input.value = (fromUrl ? params.get(id) : null) ?? sessionStorage.getItem(`ragstream.${id}`) ?? "";
  input.addEventListener("change", () => sessionStorage.setItem(`ragstream.${id}`, input.value));
}

// A token someone put in the URL is dropped from it (and from this page's history entry)
// unread, and the page says so.
function refuseTokenInUrl() {
  const url = new URL(location.href);
  if (!url.searchParams.has("token")) return;
  url.searchParams.delete("token");
  history.replaceState(history.state, "", url);
  const notice = document.getElementById("notice");
  notice.textContent = "The token is not read from the address: enter it in the token field.";
  notice.hidden = false;
  document.getElementById("token").addEventListener("change", () => (notice.hidden = true));
}

function show(tab, loaders) {
  for (const button of document.querySelectorAll("#tabs button")) {
    button.classList.toggle("active", button.dataset.tab === tab);
  }
  for (const section of document.querySelectorAll("main > section")) section.hidden = section.id !== tab;
  loaders[tab]?.();
}

document.addEventListener("DOMContentLoaded", () => {
  refuseTokenInUrl();
  remember("workspace", true);
  remember("token", false);
  const poll = initDocuments();
  initQuery();
  initExplorer();
  onAuthError(() => {
    clearDocuments();
    clearQuery();
    clearExplorer();
  });
  const loaders = { documents: poll, graph: refreshTop };
  for (const button of document.querySelectorAll("#tabs button")) {
    button.addEventListener("click", () => show(button.dataset.tab, loaders));
  }
  for (const id of ["workspace", "token"]) {
    document.getElementById(id).addEventListener("change", () => {
      showError(null);
      const active = document.querySelector("#tabs button.active").dataset.tab;
      show(active, loaders);
    });
  }
  const first = new URLSearchParams(location.search).get("tab") || "documents";
  show(first, loaders);
});
