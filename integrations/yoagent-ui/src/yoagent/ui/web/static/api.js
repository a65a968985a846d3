// Talking to the server: JSON requests, and a run's AG-UI events read from its SSE answer.

/** `GET`/`POST` JSON at `path` (relative to the page); throws an Error with the server's
 * `error` text when the answer is not 2xx. */
export async function json(path, body) {
  const options = body === undefined ? {} : {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  };
  const answer = await fetch(path, options);
  const data = await answer.json().catch(() => ({}));
  if (!answer.ok) {
    const error = new Error(data.error || `${answer.status} ${answer.statusText}`);
    error.status = answer.status;
    throw error;
  }
  return data;
}

/** POST an AG-UI run input to `path` and yield each event of the streamed answer.
 * Aborting `signal` hangs up, which cancels the run on the server. */
export async function* runEvents(path, input, signal) {
  const answer = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(input),
    signal,
  });
  if (!answer.ok) {
    const data = await answer.json().catch(() => ({}));
    const error = new Error(data.error || `${answer.status} ${answer.statusText}`);
    error.status = answer.status;
    throw error;
  }
  const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
      const data = block.split(/\r?\n/).filter((line) => line.startsWith("data:")).map((line) => line.slice(5).replace(/^ /, "")).join("\n");
      if (data) yield JSON.parse(data);
    }
  }
}
