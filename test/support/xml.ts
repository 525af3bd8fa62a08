/**
 * Minimal XML → object reader for asserting responses: elements become members, repeated elements
 * arrays, attributes `@name`, text is unescaped; short integers become numbers.
 */
import { SaxesParser } from 'saxes';

type Node = { name: string; attrs: Record<string, string>; children: Node[]; text: string };

export class XMLParser {
  // biome-ignore lint/suspicious/noExplicitAny: parsed documents are asserted field by field
  parse(text: string): any {
    const parser = new SaxesParser();
    const root: Node = { name: '#root', attrs: {}, children: [], text: '' };
    const stack: Node[] = [root];
    parser.on('opentag', (tag) => {
      const node: Node = {
        name: tag.name,
        attrs: tag.attributes as Record<string, string>,
        children: [],
        text: '',
      };
      (stack[stack.length - 1] as Node).children.push(node);
      stack.push(node);
    });
    parser.on('text', (t) => {
      (stack[stack.length - 1] as Node).text += t;
    });
    parser.on('closetag', () => {
      stack.pop();
    });
    parser.write(text).close();
    return toObject(root);
  }
}

function scalar(text: string): unknown {
  return /^-?\d{1,9}$/.test(text) ? Number(text) : text;
}

function toObject(node: Node): unknown {
  if (node.children.length === 0 && Object.keys(node.attrs).length === 0) return scalar(node.text);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node.attrs)) out[`@${k}`] = scalar(v);
  for (const child of node.children) {
    const value = toObject(child);
    const prev = out[child.name];
    if (prev === undefined) out[child.name] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[child.name] = [prev, value];
  }
  return out;
}
