/**
 * The contents `resources/read` answers: a static resource's, straight from
 * its record; a template's, from what its code returned — a string (text in
 * the template's MIME type, text/plain by default), sdk.content blocks (text;
 * an embedded resource as it is; image or audio as a blob), or any other
 * value as JSON text.
 */
import type { ReadResourceResult } from '@modelcontextprotocol/server';
import type { ContentBlock } from '../../src/protocol/index.js';
import type { ResourceRecord } from '../store/index.js';

type Contents = ReadResourceResult['contents'];

/** A static resource's contents. */
export function staticContents(resource: ResourceRecord): Contents {
  const uri = resource.uri!;
  const mimeType = resource.mimeType === undefined ? {} : { mimeType: resource.mimeType };
  return resource.text !== undefined
    ? [{ uri, ...mimeType, text: resource.text }]
    : [{ uri, ...mimeType, blob: resource.blob! }];
}

/** The contents of `uri` from what a template's code returned. */
export function contentsFromCode(
  resource: ResourceRecord,
  uri: string,
  value: unknown,
  content: readonly ContentBlock[] | undefined,
): Contents {
  if (content !== undefined) return content.map((block) => contentsOfBlock(resource, uri, block));
  if (typeof value === 'string') {
    return [{ uri, mimeType: resource.mimeType ?? 'text/plain', text: value }];
  }
  return [
    {
      uri,
      mimeType: resource.mimeType ?? 'application/json',
      text: JSON.stringify(value ?? null),
    },
  ];
}

function contentsOfBlock(
  resource: ResourceRecord,
  uri: string,
  block: ContentBlock,
): Contents[number] {
  switch (block.type) {
    case 'text':
      return { uri, mimeType: resource.mimeType ?? 'text/plain', text: block.text };
    case 'image':
    case 'audio':
      return { uri, mimeType: block.mimeType, blob: block.data };
    case 'resource':
      return block.resource;
  }
}
