// One AI SDK scenario against a yoagent-ui endpoint, with the `ai` package's own client side:
// DefaultChatTransport (what useChat posts with) and readUIMessageStream (how it reads).
// Usage: node aisdk.mjs URL SCENARIO. Prints one JSON line: what the client received.
import { DefaultChatTransport, readUIMessageStream } from "ai";

const [url, scenario] = process.argv.slice(2);
const chatId = `chat-${scenario}-${Date.now()}`;
const transport = new DefaultChatTransport({ api: url });

function user(text) {
  return { id: `user-${Math.random().toString(36).slice(2)}`, role: "user", parts: [{ type: "text", text }] };
}

// Sends the messages; reads the answer with readUIMessageStream, recording every chunk.
async function send(messages, { last, abortAfterDeltas, messageId, trigger = "submit-message" } = {}) {
  const controller = new AbortController();
  const chunks = [];
  let error = null;
  let message = null;
  let deltas = 0;
  try {
    const stream = await transport.sendMessages({
      chatId,
      messages,
      trigger,
      messageId,
      abortSignal: controller.signal,
    });
    const recorded = stream.pipeThrough(
      new TransformStream({
        transform(chunk, out) {
          chunks.push(chunk);
          if (chunk.type === "text-delta" && abortAfterDeltas && ++deltas === abortAfterDeltas) {
            controller.abort();
          }
          out.enqueue(chunk);
        },
      }),
    );
    for await (const snapshot of readUIMessageStream({
      stream: recorded,
      message: last,
      onError: (e) => {
        error = String(e?.message ?? e);
      },
    })) {
      message = snapshot;
    }
  } catch (caught) {
    error = String(caught?.message ?? caught);
  }
  return { chunks, message, error };
}

const out = {};
if (["text", "tool", "error"].includes(scenario)) {
  const prompt = { text: "hello", tool: "weather Paris", error: "weather Atlantis" }[scenario];
  Object.assign(out, await send([user(prompt)]));
} else if (scenario === "conversation") {
  const first = user("hello");
  out.first = await send([first]);
  out.second = await send([first, out.first.message, user("weather Oslo")]);
} else if (scenario === "approval" || scenario === "denial") {
  const first = user('call deploy {"service": "api"}');
  out.first = await send([first]);
  const answered = structuredClone(out.first.message);
  for (const part of answered.parts) {
    if (part.state === "approval-requested") {
      const approved = scenario === "approval";
      part.state = "approval-responded";
      part.approval = { ...part.approval, approved, ...(approved ? {} : { reason: "not on a Friday" }) };
    }
  }
  out.second = await send([first, answered], { last: answered, messageId: answered.id });
} else if (scenario === "cancel") {
  Object.assign(out, await send([user("slow")], { abortAfterDeltas: 3 }));
} else {
  throw new Error(`unknown scenario ${scenario}`);
}
out.chatId = chatId;
console.log(JSON.stringify(out));
