// One AG-UI scenario against a yoagent-ui endpoint, with the official client (@ag-ui/client).
// Usage: node agui.mjs URL SCENARIO. Prints one JSON line: what the client received.
import { HttpAgent } from "@ag-ui/client";

const [url, scenario] = process.argv.slice(2);

function agent(options = {}) {
  return new HttpAgent({ url, threadId: `thread-${scenario}-${Date.now()}`, ...options });
}

function user(text) {
  return { id: `user-${Math.random().toString(36).slice(2)}`, role: "user", content: text };
}

// Runs once, recording every event and how the run ended.
async function run(client, parameters = {}) {
  const events = [];
  const subscriber = {
    onEvent: ({ event }) => {
      events.push(event);
    },
  };
  let error = null;
  let result;
  try {
    result = await client.runAgent(parameters, subscriber);
  } catch (caught) {
    error = String(caught?.message ?? caught);
  }
  return { events, error, result: result?.result ?? null, newMessages: result?.newMessages ?? [] };
}

const out = {};
if (scenario === "text" || scenario === "tool" || scenario === "error" || scenario === "subagent") {
  const prompt = {
    text: "hello",
    tool: "weather Paris",
    error: "weather Atlantis",
    subagent: 'call helper {"task": "weather Rome"}',
  }[scenario];
  const client = agent({ initialMessages: [user(prompt)] });
  Object.assign(out, await run(client));
  out.messages = client.messages;
} else if (scenario === "conversation") {
  const client = agent({ initialMessages: [user("hello")] });
  out.first = await run(client);
  client.addMessage(user("weather Oslo"));
  out.second = await run(client);
  out.messages = client.messages;
} else if (scenario === "frontend") {
  const tools = [
    {
      name: "ask_user",
      description: "Ask the person a question in the browser.",
      parameters: { type: "object", properties: { question: { type: "string" } } },
    },
  ];
  const client = agent({ initialMessages: [user('call ask_user {"question": "Blue or red?"}')] });
  out.first = await run(client, { tools });
  const finished = out.first.events.find((event) => event.type === "RUN_FINISHED");
  const callId = finished?.outcome?.pendingToolCallIds?.[0];
  const call = client.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === callId);
  out.asked = call ? JSON.parse(call.function.arguments) : null;
  client.addMessage({ id: "browser-answer-1", role: "tool", toolCallId: callId, content: "blue" });
  out.second = await run(client, { tools });
  out.messages = client.messages;
} else if (scenario === "approval" || scenario === "denial") {
  const client = agent({ initialMessages: [user('call deploy {"service": "api"}')] });
  out.first = await run(client);
  out.pendingInterrupts = client.pendingInterrupts;
  const payload = scenario === "approval" ? { approved: true } : { approved: false, reason: "not on a Friday" };
  const resume = client.pendingInterrupts.map((interrupt) => ({
    interruptId: interrupt.id,
    status: "resolved",
    payload,
  }));
  out.second = await run(client, { resume });
  out.messages = client.messages;
} else if (scenario === "state") {
  const client = agent({
    initialMessages: [user('call shared_state {"action": "set", "key": "count", "value": "2"}')],
    initialState: { count: 1, name: "demo" },
  });
  Object.assign(out, await run(client));
  out.state = client.state;
} else if (scenario === "cancel") {
  const client = agent({ initialMessages: [user("slow")] });
  const events = [];
  let ticks = 0;
  const running = client.runAgent(
    {},
    {
      onEvent: ({ event }) => {
        events.push(event);
        if (event.type === "TEXT_MESSAGE_CONTENT" && ++ticks === 3) {
          client.abortRun();
        }
      },
    },
  );
  let error = null;
  try {
    await running;
  } catch (caught) {
    error = String(caught?.message ?? caught);
  }
  Object.assign(out, { events, error, ticks, threadIds: [client.threadId] });
} else {
  throw new Error(`unknown scenario ${scenario}`);
}
console.log(JSON.stringify(out));
