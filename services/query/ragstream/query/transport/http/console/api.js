// The console's client of the HTTP/JSON API: the same routes and bodies as curl uses.
// Requests carry the workspace and, when one is entered, the bearer token; a refusal
// (google.rpc.Status JSON) becomes an Error whose message names the broken field, and a
// refusal of the token or workspace (401, 403) first tells the views to clear themselves,
// so nothing another token or workspace could read stays on screen.
import { EventParser } from "./sse.js";

const workspaceInput = () => document.getElementById("workspace");
const tokenInput = () => document.getElementById("token");

export function workspace() {
  return workspaceInput().value.trim();
}

function headers(json) {
  const result = {};
  const token = tokenInput().value.trim();
  if (token) result.authorization = `Bearer ${token}`;
  if (json) result["content-type"] = "application/json";
  return result;
}

const authListeners = [];

// Calls listener(error) whenever the server refuses the token or the workspace.
export function onAuthError(listener) {
  authListeners.push(listener);
}

async function failure(response) {
  const error = new Error(await describe(response));
  error.status = response.status;
  if (response.status === 401 || response.status === 403) {
    for (const listener of authListeners) listener(error);
  }
  return error;
}

async function describe(response) {
  let text = `${response.status} ${response.statusText}`;
  try {
    const status = await response.json();
    const violations = (status.details || []).flatMap((d) => d.fieldViolations || []);
    text = status.message || text;
    if (violations.length && !status.message) {
      text = violations.map((v) => `${v.field} ${v.description}`).join("; ");
    }
  } catch (_) {
    // not JSON: keep the status line
  }
  return text;
}

// GETs a read route with the workspace (when one is entered) and `params` as parameters.
export async function get(path, params = {}) {
  const query = new URLSearchParams();
  const ws = workspace();
  if (ws) query.set("workspace", ws);
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") query.append(key, String(value));
  }
  const response = await fetch(`${path}?${query}`, { headers: headers(false) });
  if (!response.ok) throw await failure(response);
  return response.json();
}

export async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: headers(true),
    body: JSON.stringify({ workspace: workspace(), ...body }),
  });
  if (!response.ok) throw await failure(response);
  return response.json();
}

// POSTs a form (multipart/form-data, its boundary set by the browser) with the workspace;
// the upload header is what the server requires of a form body (http/browser.py).
export async function postForm(path, fields) {
  const form = new FormData();
  form.append("workspace", workspace());
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  const response = await fetch(path, {
    method: "POST",
    headers: { ...headers(false), "x-ragstream-upload": "console" },
    body: form,
  });
  if (!response.ok) throw await failure(response);
  return response.json();
}

// POSTs `body` and calls onEvent(name, data) for each server-sent event, in order.
export async function stream(path, body, onEvent) {
  const response = await fetch(path, {
    method: "POST",
    headers: headers(true),
    body: JSON.stringify({ workspace: workspace(), ...body }),
  });
  if (!response.ok) throw await failure(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const events = new EventParser((name, data) => onEvent(name, JSON.parse(data)));
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    events.push(decoder.decode(value, { stream: true }));
  }
  events.push(decoder.decode(), true);
}

export function showError(error) {
  const box = document.getElementById("error");
  if (!error) {
    box.hidden = true;
    return;
  }
  box.textContent = error.message || String(error);
  box.hidden = false;
}

// Element helper: el("td", {class: "x"}, "text", child, ...); text is never parsed as HTML.
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
