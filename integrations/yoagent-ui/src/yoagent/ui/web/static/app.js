// The page: two views (chat, runs) chosen by the URL's #fragment.

import { json } from "./api.js";
import { Chat } from "./chat.js";
import { Runs } from "./runs.js";

const views = { chat: document.querySelector("#chat-view"), runs: document.querySelector("#runs-view") };
let chat = null;
let runs = null;
let info = null;

async function route() {
  let name = location.hash.replace("#", "") || (info.chat ? "chat" : "runs");
  if (name === "chat" && !info.chat) name = "runs";
  for (const [key, view] of Object.entries(views)) {
    view.hidden = key !== name;
    document.querySelector(`#nav-${key}`).setAttribute("aria-current", key === name ? "page" : "false");
  }
  if (name === "runs") {
    const fresh = await json("api/sources");
    await runs.show(fresh.sources);
  } else {
    document.querySelector("#prompt").focus();
  }
}

async function start() {
  info = await json("api/info");
  document.querySelector("#title").textContent = info.title;
  document.title = info.title;
  if (info.model) document.querySelector("#model").textContent = `${info.model.provider} / ${info.model.id}`;
  if (!info.chat) document.querySelector("#nav-chat").hidden = true;
  else chat = new Chat(views.chat);
  runs = new Runs(views.runs);
  window.addEventListener("hashchange", route);
  await route();
  document.body.dataset.ready = "true";
}

start();
