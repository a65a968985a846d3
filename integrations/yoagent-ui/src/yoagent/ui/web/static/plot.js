// Tokens and cost per turn, drawn on a canvas: one column per pixel (the largest turn of
// the turns it covers), so a run of 10,000 turns draws as fast as one of 10.

export const COLORS = { prompt: "#748ffc", cache: "#a5d8ff", output: "#2b8a3e", cost: "#e8590c" };

/** Draw `series` (the run's per-turn arrays) on `canvas`; `onPick(turnIndex)` on a click
 * or Enter at a column. Returns a redraw function (for a resize). */
export function plotTurns(canvas, series, onPick) {
  const n = series.input.length;
  const draw = () => {
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(1, canvas.clientWidth);
    const height = Math.max(1, canvas.clientHeight);
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    if (!n) return;
    const columns = Math.min(n, Math.floor(width));
    const per = n / columns;
    const barWidth = width / columns;
    const prompt = [], cache = [], output = [], cost = [];
    for (let c = 0; c < columns; c++) {
      const from = Math.floor(c * per), to = Math.max(from + 1, Math.floor((c + 1) * per));
      let best = from, bestTotal = -1, costMax = null;
      for (let i = from; i < to; i++) {
        const total = series.input[i] + series.cacheRead[i] + series.cacheWrite[i] + series.output[i];
        if (total > bestTotal) { bestTotal = total; best = i; }
        const turnCost = series.costUsd[i];
        if (turnCost !== null && (costMax === null || turnCost > costMax)) costMax = turnCost;
      }
      prompt.push(series.input[best] + series.cacheWrite[best]);
      cache.push(series.cacheRead[best]);
      output.push(series.output[best]);
      cost.push(costMax);
    }
    const top = Math.max(1, ...prompt.map((p, i) => p + cache[i] + output[i]));
    const costTop = Math.max(0, ...cost.filter((value) => value !== null));
    const scale = (height - 6) / top;
    for (let c = 0; c < columns; c++) {
      const x = c * barWidth;
      const w = Math.max(1, barWidth - (barWidth > 3 ? 1 : 0));
      let y = height;
      for (const [value, color] of [[cache[c], COLORS.cache], [prompt[c], COLORS.prompt], [output[c], COLORS.output]]) {
        const bar = value * scale;
        ctx.fillStyle = color;
        ctx.fillRect(x, y - bar, w, bar);
        y -= bar;
      }
    }
    if (costTop > 0) {
      ctx.strokeStyle = COLORS.cost;
      ctx.lineWidth = 2;
      ctx.beginPath();
      let started = false;
      cost.forEach((value, c) => {
        if (value === null) { started = false; return; }
        const x = c * barWidth + barWidth / 2;
        const y = height - 3 - (value / costTop) * (height - 8);
        if (started) ctx.lineTo(x, y); else ctx.moveTo(x, y);
        started = true;
      });
      ctx.stroke();
    }
  };
  canvas.onclick = (event) => {
    const box = canvas.getBoundingClientRect();
    const share = (event.clientX - box.left) / Math.max(1, box.width);
    onPick(Math.min(n - 1, Math.max(0, Math.floor(share * n))));
  };
  draw();
  return draw;
}
