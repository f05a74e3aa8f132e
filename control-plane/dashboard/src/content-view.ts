/**
 * What a client would see of rendered prompt messages and read resource
 * contents: text as text, images as images, audio and other binary data as
 * its type and size (the page's policy plays no media from data), an
 * embedded resource as its URI and contents. Anything unknown is shown as
 * JSON rather than dropped.
 */
import { h, prettyJson } from './dom.js';
import type { RenderedMessage, ResourceContents } from './types.js';

/** Rendered prompt messages as a list: each with its role and content. */
export function messageList(messages: readonly RenderedMessage[]): HTMLElement {
  return h(
    'ol',
    { class: 'messages', 'aria-label': 'Rendered messages' },
    messages.map((message, index) =>
      h(
        'li',
        { class: `message message-${message.role}` },
        h('p', { class: 'role' }, `${index + 1}. ${message.role}`),
        contentBlock(message.content),
      ),
    ),
  );
}

/** The contents of a resource read, one item each. */
export function contentsList(contents: readonly ResourceContents[]): HTMLElement {
  return h(
    'ol',
    { class: 'contents', 'aria-label': 'Resource contents' },
    contents.map((item) => h('li', {}, resourceContents(item))),
  );
}

/** One MCP content block. */
function contentBlock(content: RenderedMessage['content']): HTMLElement {
  const block = content as { type: string; [field: string]: unknown };
  if (block.type === 'text' && typeof block.text === 'string') {
    return h('pre', { class: 'content-text', tabindex: 0 }, block.text);
  }
  if (
    (block.type === 'image' || block.type === 'audio') &&
    typeof block.data === 'string' &&
    typeof block.mimeType === 'string'
  ) {
    return binary(block.data, block.mimeType, block.type);
  }
  if (block.type === 'resource' && typeof block.resource === 'object' && block.resource) {
    return resourceContents(block.resource as ResourceContents);
  }
  return h('pre', { class: 'result', tabindex: 0 }, prettyJson(content));
}

/** A resource's URI and type above its text or binary data. */
function resourceContents(item: ResourceContents): HTMLElement {
  return h(
    'div',
    { class: 'resource-contents' },
    h(
      'p',
      { class: 'resource-uri' },
      'Resource ',
      h('code', {}, item.uri),
      item.mimeType ? ` (${item.mimeType})` : '',
    ),
    typeof item.text === 'string'
      ? h('pre', { class: 'content-text', tabindex: 0 }, item.text)
      : typeof item.blob === 'string'
        ? binary(item.blob, item.mimeType ?? 'application/octet-stream', 'blob')
        : null,
  );
}

/** An image shown as itself; other binary data described by type and size. */
function binary(base64: string, mimeType: string, kind: string): HTMLElement {
  if (mimeType.startsWith('image/')) {
    return h('img', {
      class: 'content-image',
      src: `data:${mimeType};base64,${base64}`,
      alt: `Image (${mimeType}, ${decodedBytes(base64)} bytes)`,
    });
  }
  return h('p', { class: 'hint' }, `${kind}: ${mimeType}, ${decodedBytes(base64)} bytes`);
}

/** Bytes that base64 text stands for. */
export function decodedBytes(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.max(0, (base64.length / 4) * 3 - padding);
}
