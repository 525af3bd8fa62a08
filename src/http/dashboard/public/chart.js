/**
 * The live-calls chart: a bounded series of (time, value) samples drawn as inline SVG (no library).
 */
const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 600;
const HEIGHT = 120;

/** Samples of the last `windowMs`; older ones are dropped as new ones arrive, so memory stays bounded. */
export class Series {
  constructor(windowMs) {
    this.windowMs = windowMs;
    this.samples = [];
  }

  add(at, value) {
    const last = this.samples.at(-1);
    // One sample per second is plenty for a minutes-wide chart.
    if (last && at - last.at < 1000) last.value = value;
    else this.samples.push({ at, value });
    const from = at - this.windowMs;
    while (this.samples.length > 0 && this.samples[0].at < from) this.samples.shift();
  }

  peak() {
    return this.samples.reduce((m, s) => Math.max(m, s.value), 0);
  }
}

/** Draws `series` into `svg` for the window ending at `now`. */
export function drawChart(svg, series, now) {
  const top = Math.max(1, series.peak());
  const x = (at) => ((at - (now - series.windowMs)) / series.windowMs) * WIDTH;
  const y = (v) => HEIGHT - 4 - (v / top) * (HEIGHT - 8);
  // A step line: the count holds until the next sample changes it.
  const points = [];
  series.samples.forEach((s, i) => {
    const px = x(s.at).toFixed(1);
    if (i > 0) points.push(`${px},${y(series.samples[i - 1].value).toFixed(1)}`);
    points.push(`${px},${y(s.value).toFixed(1)}`);
  });
  const nodes = [];
  for (const v of [0, top]) nodes.push(el('line', { class: 'grid', x1: 0, x2: WIDTH, y1: y(v), y2: y(v) }));
  if (points.length > 0) {
    const first = series.samples[0];
    const lastX = x(series.samples.at(-1).at).toFixed(1);
    nodes.push(
      el('polygon', {
        class: 'area',
        points: `${x(first.at).toFixed(1)},${HEIGHT} ${points.join(' ')} ${lastX},${HEIGHT}`,
      }),
    );
    nodes.push(el('polyline', { points: points.join(' ') }));
  }
  svg.replaceChildren(...nodes);
}

function el(name, attrs) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}
