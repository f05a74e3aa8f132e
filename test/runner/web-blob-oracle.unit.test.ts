/**
 * The tool realm's Blob, File and FormData, and the bodies fetch and
 * Response make of them, against Node's own (see test/support/realm-oracle.ts),
 * on generated inputs: same sizes, types, bytes and entries, or the same
 * class of error. The multipart/form-data encoding is compared by parsing
 * it back with Node's parser (undici's), next to Node's own encoding parsed
 * the same way; the realm's parser is fed Node's encoding.
 *
 * Known differences left out of the generators, where Node (undici) departs
 * from the standards and the realm follows them: undici writes no filename
 * for a File named "" (HTML always writes one; undici's parser then makes
 * the part a string), and its parser strips a byte order mark from a string
 * value (Fetch: "UTF-8 decoded without BOM"); Blob's `endings: 'native'`
 * leaves a lone CR as it is (the File API makes it LF, as the realm does);
 * Node's URLSearchParams (which its Response.formData() parses with)
 * garbles a non-ASCII character next to an invalid percent-escape ("%FFé").
 * Each is checked in the realm alone below.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ToolRealm, bothOutcomes, expectAgreement, runOnNode } from '../support/realm-oracle.js';

let realm: ToolRealm;
beforeAll(async () => {
  realm = await ToolRealm.open();
});

const agree = (probe: string, input: unknown): Promise<void> =>
  expectAgreement(realm, probe, input);

/** Strings with what encodings trip on: CR, LF, quotes, non-ASCII, astral and lone surrogates. */
const trickyString = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc
    .array(
      fc.constantFrom(
        'a',
        'Z',
        '\r',
        '\n',
        '\r\n',
        '"',
        '%22',
        'é',
        '😀',
        '\ud800',
        '\udc00',
        ' ',
        '=',
      ),
      { maxLength: 6 },
    )
    .map((parts) => parts.join('')),
);
const byteArray = fc.array(fc.nat(255), { maxLength: 12 });
/** Types as given: kept lower-cased, or dropped for a character outside U+0020–U+007E. */
const typeGiven = fc.oneof(
  fc.constantFrom('', 'text/plain', 'Text/HTML;Charset=UTF-8', 'application/octet-stream', 'a/b'),
  fc.constantFrom('é/x', 'a\nb', 'x\u007f', ' spaced ', 'UPPER/CASE'),
  fc.string({ maxLength: 6 }),
);

type Part =
  | { t: 's'; v: string }
  | { t: 'n'; v: number }
  | { t: 'u8' | 'ab'; bytes: number[] }
  | { t: 'dv' | 'i16'; bytes: number[]; offset: number }
  | { t: 'blob'; parts: Part[]; type: string };

const { part } = fc.letrec<{ part: Part }>((tie) => ({
  part: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    trickyString.map((v) => ({ t: 's' as const, v })),
    fc.oneof(fc.integer(), fc.double()).map((v) => ({ t: 'n' as const, v })),
    fc.record({ t: fc.constantFrom('u8' as const, 'ab' as const), bytes: byteArray }),
    fc.record({
      t: fc.constantFrom('dv' as const, 'i16' as const),
      bytes: byteArray,
      offset: fc.nat(6),
    }),
    fc.record({
      t: fc.constant('blob' as const),
      parts: fc.array(tie('part'), { maxLength: 3 }),
      type: typeGiven,
    }),
  ),
}));

/** Builds parts (in whichever realm runs it) and describes Blobs and FormData entries as data. */
const HELPERS = `
  const part = (p) => {
    switch (p.t) {
      case 's': case 'n': return p.v;
      case 'u8': return new Uint8Array(p.bytes);
      case 'ab': return new Uint8Array(p.bytes).buffer;
      case 'dv': {
        const buffer = new Uint8Array(p.bytes).buffer;
        return new DataView(buffer, Math.min(p.offset, buffer.byteLength));
      }
      case 'i16': {
        const buffer = new Uint8Array(p.bytes).buffer;
        const offset = Math.min(p.offset - (p.offset % 2), buffer.byteLength - (buffer.byteLength % 2));
        return new Int16Array(buffer, offset, Math.floor((buffer.byteLength - offset) / 2));
      }
      case 'blob': return new Blob(p.parts.map(part), { type: p.type });
    }
    throw new Error('unknown part ' + p.t);
  };
  const blobOf = (b) => (b.file ? new File(b.parts.map(part), b.file, { type: b.type }) : new Blob(b.parts.map(part), { type: b.type }));
  const describeBlob = async (blob) => [
    Object.prototype.toString.call(blob), blob instanceof Blob, blob instanceof File,
    blob.size, blob.type, bytes(await blob.arrayBuffer()), await blob.text(),
    blob instanceof File ? blob.name : null,
  ];
  const describeValue = async (value) => (typeof value === 'string' ? value : value === null ? null : await describeBlob(value));
  const describeForm = async (form) => {
    const out = [];
    for (const [name, value] of form) out.push([name, await describeValue(value)]);
    return out;
  };
`;

/** An entry for FormData: a string value, or a Blob or File with or without a filename. */
const formValue = fc.oneof(
  { weight: 3, arbitrary: trickyString.map((v) => ({ s: v })) },
  {
    weight: 2,
    arbitrary: fc.record({
      parts: fc.array(part, { maxLength: 3 }),
      type: typeGiven,
      file: fc.oneof(fc.constant(null), trickyString),
      filename: fc.oneof(fc.constant(null), trickyString),
    }),
  },
);
type FormValue =
  { s: string } | { parts: Part[]; type: string; file: string | null; filename: string | null };
/** Whether Node's `endings: 'native'` departs from the File API here (a lone CR in a string part). */
function nativeWithLoneCr(parts: Part[], options: { endings?: string } | undefined): boolean {
  return options?.endings === 'native' && parts.some((p) => p.t === 's' && /\r(?!\n)/.test(p.v));
}

const formName = fc.oneof(fc.constantFrom('a', 'b', 'A', 'a\r\nb', 'x"y', '\ud800'), trickyString);

describe('Blob', () => {
  it('is made of strings, buffers, views and Blobs, with its type and endings, as in Node', async () => {
    const probe = `async ({ parts, options }) => {
      ${HELPERS}
      let blob;
      try { blob = new Blob(parts.map(part), options); } catch (error) { return { threw: errorName(error) }; }
      return describeBlob(blob);
    }`;
    const options = fc.oneof(
      fc.constant(undefined),
      fc.record(
        {
          type: typeGiven,
          endings: fc.constantFrom('transparent', 'native', 'Native', 'bad', undefined),
        },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc
          .record({ parts: fc.array(part, { maxLength: 5 }), options })
          .filter((input) => !nativeWithLoneCr(input.parts, input.options)),
        (input) => agree(probe, input),
      ),
      { numRuns: 300 },
    );
  });

  it('slices with negative and out-of-range positions and a content type, as in Node', async () => {
    const probe = `async ({ data, slices }) => {
      ${HELPERS}
      let blob = new Blob([new Uint8Array(data)], { type: 'x/y' });
      const seen = [];
      for (const [start, end, type] of slices) {
        blob = type === undefined ? blob.slice(start, end) : blob.slice(start, end, type);
        seen.push(await describeBlob(blob));
      }
      return seen;
    }`;
    const position = fc.oneof(fc.constant(undefined), fc.integer({ min: -20, max: 20 }));
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          data: fc.array(fc.nat(255), { maxLength: 16 }),
          slices: fc.array(
            fc.tuple(position, position, fc.oneof(fc.constant(undefined), typeGiven)),
            {
              minLength: 1,
              maxLength: 4,
            },
          ),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: 300 },
    );
  });

  it('decodes text as UTF-8 (BOM dropped, bad bytes replaced) and copies bytes out, as in Node', async () => {
    const probe = `async (data) => {
      const blob = new Blob([new Uint8Array(data)]);
      const first = await blob.bytes();
      first[0] = 99;
      return [await blob.text(), bytes(await blob.bytes()), first instanceof Uint8Array,
        (await blob.arrayBuffer()) instanceof ArrayBuffer];
    }`;
    const data = fc.oneof(
      fc.array(fc.nat(255), { maxLength: 12 }),
      fc
        .tuple(
          fc.constantFrom([0xef, 0xbb, 0xbf], [0xef, 0xbb], [0xc3], []),
          fc.array(fc.nat(255), { maxLength: 6 }),
        )
        .map(([head, tail]) => [...head, ...tail]),
    );
    await fc.assert(
      fc.asyncProperty(data, (input) => agree(probe, input)),
      { numRuns: 200 },
    );
  });

  it('refuses what is no sequence, a bad ending and a receiver that is no Blob, as Node does', async () => {
    const probe = `async (which) => {
      const runs = {
        string: () => new Blob('abc'),
        number: () => new Blob(5),
        null: () => new Blob(null),
        plainObject: () => new Blob({}),
        iteratorNotFunction: () => new Blob({ [Symbol.iterator]: 1 }),
        symbolPart: () => new Blob([Symbol('s')]),
        badEndings: () => new Blob([], { endings: 'crlf' }),
        optionsNotObject: () => new Blob([], 5),
        noNew: () => Blob([]),
        sizeOfOther: () => Object.getOwnPropertyDescriptor(Blob.prototype, 'size').get.call({}),
        typeOfOther: () => Object.getOwnPropertyDescriptor(Blob.prototype, 'type').get.call(new Uint8Array(1)),
        sliceOfOther: () => Blob.prototype.slice.call({}),
        textOfOther: () => Blob.prototype.text.call({}),
        arrayBufferOfOther: () => Blob.prototype.arrayBuffer.call({}),
        bytesOfOther: () => Blob.prototype.bytes.call({}),
        fileNoName: () => new File(['a']),
        fileNoArguments: () => new File(),
        nameOfBlob: () => Object.getOwnPropertyDescriptor(File.prototype, 'name').get.call(new Blob([])),
        symbolName: () => new File([], Symbol('s')),
        symbolType: () => new Blob([], { type: Symbol('s') }),
        formDataWithForm: () => new FormData({}),
        formDataNull: () => new FormData(null),
        appendStringWithFilename: () => new FormData().append('a', 'b', 'c.txt'),
        appendOneArgument: () => new FormData().append('a'),
        setOneArgument: () => new FormData().set('a'),
        getNoArgument: () => new FormData().get(),
        forEachNotFunction: () => new FormData().forEach(1),
        appendOnOther: () => FormData.prototype.append.call({}, 'a', 'b'),
        entriesOnOther: () => FormData.prototype.entries.call({}),
        formDataOfText: () => new Response('a=1').formData(),
        formDataNoBoundary: () => new Response('--x--', { headers: { 'content-type': 'multipart/form-data' } }).formData(),
        formDataBroken: () => new Response('garbage', { headers: { 'content-type': 'multipart/form-data; boundary=x' } }).formData(),
      };
      try {
        await runs[which]();
        return 'no error';
      } catch (error) {
        return errorName(error);
      }
    }`;
    const cases = [
      'string',
      'number',
      'null',
      'plainObject',
      'iteratorNotFunction',
      'symbolPart',
      'badEndings',
      'optionsNotObject',
      'noNew',
      'sizeOfOther',
      'typeOfOther',
      'sliceOfOther',
      'textOfOther',
      'arrayBufferOfOther',
      'bytesOfOther',
      'fileNoName',
      'fileNoArguments',
      'nameOfBlob',
      'symbolName',
      'symbolType',
      'formDataWithForm',
      'formDataNull',
      'appendStringWithFilename',
      'appendOneArgument',
      'setOneArgument',
      'getNoArgument',
      'forEachNotFunction',
      'appendOnOther',
      'entriesOnOther',
      'formDataOfText',
      'formDataNoBoundary',
      'formDataBroken',
    ];
    for (const which of cases) {
      const outcomes = await bothOutcomes(realm, probe, which);
      expect({ which, ...outcomes.realm }).toEqual({ which, ...outcomes.node });
      expect({ which, outcome: outcomes.realm }).not.toEqual({
        which,
        outcome: { value: 'no error' },
      });
    }
  });
});

describe('where Node departs from the standards, the realm follows them', () => {
  it("endings: 'native' makes CR LF and a lone CR into LF (File API §3.1.1)", async () => {
    const probe = `async () => new Blob(['a\\rb\\r\\nc\\nd\\r'], { endings: 'native' }).text()`;
    expect(await realm.run(probe, null)).toEqual({ value: 'a\nb\nc\nd\n' });
  });

  it('an invalid percent-escape beside a non-ASCII character decodes as the URL standard says', async () => {
    const probe = `async (body) => [...(await new Response(body, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' } }).formData())]`;
    expect(await realm.run(probe, '%FFé=😀%C3')).toEqual({ value: [['\ufffdé', '😀\ufffd']] });
  });

  it('a string value beginning with a byte order mark keeps it when parsed', async () => {
    const probe = `async () => {
      const form = new FormData();
      form.append('a', '\\ufeffx');
      return (await new Response(form).formData()).get('a');
    }`;
    expect(await realm.run(probe, null)).toEqual({ value: '\ufeffx' });
  });
});

describe('File', () => {
  it('has its name (as a USVString), lastModified, type and bytes, as in Node', async () => {
    const probe = `async ({ parts, name, options }) => {
      ${HELPERS}
      const file = new File(parts.map(part), name, options);
      return [await describeBlob(file), options !== undefined && 'lastModified' in options ? file.lastModified : typeof file.lastModified,
        await describeBlob(file.slice(1))];
    }`;
    const options = fc.oneof(
      fc.constant(undefined),
      fc.record(
        {
          type: typeGiven,
          lastModified: fc.oneof(fc.integer(), fc.integer({ min: -1e15, max: 1e15 })),
          endings: fc.constantFrom('transparent', 'native'),
        },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc
          .record({ parts: fc.array(part, { maxLength: 3 }), name: trickyString, options })
          .filter((input) => !nativeWithLoneCr(input.parts, input.options)),
        (input) => agree(probe, input),
      ),
      { numRuns: 200 },
    );
  });
});

describe('FormData', () => {
  it('appends, sets, deletes and reads entries in order, Blobs becoming Files, as in Node', async () => {
    const probe = `async (operations) => {
      ${HELPERS}
      const form = new FormData();
      const steps = [];
      for (const [op, name, value] of operations) {
        let result;
        try {
          if (op === 'append' || op === 'set') {
            if ('s' in value) result = form[op](name, value.s);
            else if (value.filename === null) {
              const blob = blobOf(value);
              form[op](name, blob);
              // A File appended without a filename is kept as it is; a Blob becomes a File.
              const got = form.getAll(name);
              result = [got[got.length - 1] === blob, await describeValue(got[got.length - 1])];
            } else result = form[op](name, blobOf(value), value.filename);
          } else if (op === 'getAll') {
            result = await Promise.all(form.getAll(name).map(describeValue));
          } else if (op === 'get') {
            result = await describeValue(form.get(name));
          } else result = form[op](name);
          steps.push({ value: result === undefined ? '<undefined>' : result });
        } catch (error) {
          steps.push({ threw: errorName(error) });
        }
      }
      const forEachSeen = [];
      form.forEach((value, name, self) => forEachSeen.push([name, typeof value, self === form]));
      return [steps, await describeForm(form), [...form.keys()], (await Promise.all([...form.values()].map(describeValue))),
        forEachSeen, Object.prototype.toString.call(form),
      // (FormData.length is left out: WebIDL makes it 0, undici's is 1.)
      [Blob.length, File.length, FormData.prototype[Symbol.iterator] === FormData.prototype.entries]];
    }`;
    const operation = fc.oneof(
      fc.tuple(fc.constantFrom('append', 'set'), formName, formValue),
      fc.tuple(fc.constantFrom('delete', 'get', 'getAll', 'has'), formName, fc.constant(null)),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { maxLength: 8 }), (input) => agree(probe, input)),
      { numRuns: 250 },
    );
  });

  it('iterates live: entries appended during the walk are seen, as in Node', async () => {
    const probe = `() => {
      const form = new FormData();
      form.append('a', '1');
      form.append('b', '2');
      const seen = [];
      for (const [name, value] of form) {
        seen.push(name + value);
        if (seen.length < 4) form.append('c' + seen.length, 'x');
        if (name === 'b') form.delete('a');
      }
      return [seen, [...form.keys()]];
    }`;
    await agree(probe, null);
  });
});

/** Builds a FormData from entries (in whichever realm) and encodes it with that realm's Response. */
const ENCODE = `async (entries) => {
  ${HELPERS}
  const form = new FormData();
  for (const [name, value] of entries) {
    if ('s' in value) form.append(name, value.s);
    else if (value.filename === null) form.append(name, blobOf(value));
    else form.append(name, blobOf(value), value.filename);
  }
  const response = new Response(form);
  return { contentType: response.headers.get('content-type'), bytes: bytes(await response.arrayBuffer()) };
}`;

/** Decodes a multipart body with the realm's Response.formData() (or Node's) and describes it. */
const DECODE = `async ({ contentType, bytes: body }) => {
  ${HELPERS}
  const form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
  return describeForm(form);
}`;

/** Entries undici's encoder and parser treat as the standards do (see the header comment). */
const wireEntry = fc.tuple(
  formName,
  formValue.filter((value: FormValue) => {
    if ('s' in value) return !value.s.startsWith('\ufeff');
    const name = value.filename ?? value.file ?? 'blob';
    return name !== '';
  }),
);

describe('multipart/form-data', () => {
  it("the realm's encoding, parsed by Node, gives what Node's own encoding gives", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(wireEntry, { maxLength: 5 }), async (entries) => {
        const fromRealm = await realm.run(ENCODE, entries);
        const fromNode = await runOnNode(ENCODE, entries);
        if (!('value' in fromRealm) || !('value' in fromNode)) {
          expect(fromRealm).toEqual(fromNode);
          return;
        }
        const encoded = fromRealm.value as { contentType: string; bytes: number[] };
        expect(encoded.contentType).toMatch(
          /^multipart\/form-data; boundary=----mcphost-formdata-[0-9a-f]{24}$/,
        );
        const parsedRealm = await runOnNode(DECODE, encoded);
        const parsedNode = await runOnNode(DECODE, fromNode.value);
        expect(parsedRealm).toEqual(parsedNode);
      }),
      { numRuns: 200 },
    );
  });

  it("the realm parses Node's encoding as Node does", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(wireEntry, { maxLength: 5 }), async (entries) => {
        const fromNode = await runOnNode(ENCODE, entries);
        if (!('value' in fromNode)) throw new Error('Node could not encode: ' + fromNode.threw);
        await agree(DECODE, fromNode.value);
      }),
      { numRuns: 200 },
    );
  });

  it('writes a filename for a File named "" and escapes quotes, CR and LF in names', async () => {
    const probe = `async () => {
      const form = new FormData();
      form.append('n"a\\rm\\ne', 'v\\rw\\nx\\r\\ny');
      form.append('f', new File(['z'], '', { type: 't/u' }));
      form.append('g', new Blob(['q']), 'a"b\\r\\n');
      const response = new Response(form);
      const type = response.headers.get('content-type');
      const boundary = type.slice(type.indexOf('=') + 1);
      return (await response.text()).split(boundary).join('BOUNDARY');
    }`;
    expect(await realm.run(probe, null)).toEqual({
      value:
        '--BOUNDARY\r\nContent-Disposition: form-data; name="n%22a%0D%0Am%0D%0Ae"\r\n\r\nv\r\nw\r\nx\r\ny\r\n' +
        '--BOUNDARY\r\nContent-Disposition: form-data; name="f"; filename=""\r\nContent-Type: t/u\r\n\r\nz\r\n' +
        '--BOUNDARY\r\nContent-Disposition: form-data; name="g"; filename="a%22b%0D%0A"\r\n' +
        'Content-Type: application/octet-stream\r\n\r\nq\r\n--BOUNDARY--\r\n',
    });
  });

  it('parses application/x-www-form-urlencoded bodies as Node does', async () => {
    const probe = `async ({ body, contentType }) => {
      const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
      return [...form];
    }`;
    // Non-ASCII characters, or invalid escapes, not both (see the header comment).
    const common = ['a', '=', '&', '+', '%20', '%3D', '%26', '%C3%A9', '%F0%9F%98%80', 'x'];
    const body = fc
      .oneof(
        fc.array(fc.constantFrom(...common, 'é', '😀', '\ud800'), { maxLength: 10 }),
        fc.array(fc.constantFrom(...common, '%', '%2', '%FF', '%C3', '%zz'), { maxLength: 10 }),
      )
      .map((parts) => parts.join(''));
    const contentType = fc.constantFrom(
      'application/x-www-form-urlencoded',
      'Application/X-WWW-Form-Urlencoded; charset=UTF-8',
      ' application/x-www-form-urlencoded ',
    );
    await fc.assert(
      fc.asyncProperty(fc.record({ body, contentType }), (input) => agree(probe, input)),
      { numRuns: 200 },
    );
  });
});

describe('bodies', () => {
  it('a Blob body gives its bytes and (when not empty) its type as the Content-Type, as in Node', async () => {
    const probe = `async ({ parts, type, header }) => {
      ${HELPERS}
      const init = header === null ? undefined : { headers: { 'content-type': header } };
      const response = new Response(new Blob(parts.map(part), { type }), init);
      return [response.headers.get('content-type'), bytes(await response.arrayBuffer())];
    }`;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          parts: fc.array(part, { maxLength: 3 }),
          type: typeGiven,
          header: fc.constantFrom(null, 'x/given'),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: 150 },
    );
  });

  it('Response.blob() types the Blob by the Content-Type, parsed and serialised, as in Node', async () => {
    const probe = `async ({ body, contentType }) => {
      const init = contentType === null ? undefined : { headers: [['content-type', contentType[0]], ...contentType.slice(1).map((value) => ['content-type', value])] };
      const blob = await new Response(body, init).blob();
      return [blob.type, blob.size, await blob.text(), Object.prototype.toString.call(blob)];
    }`;
    const single = fc.constantFrom(
      'text/plain',
      'Text/HTML; Charset="UTF-8"',
      'text/html;charset=utf-8;charset=latin1',
      'a/b; p="q\\\\\\"r"; x=',
      'a/b;  =c; d',
      'a/b; e="unterminated',
      '*/*',
      'nonsense',
      '',
      'image/png ; q=0.5',
      'text/plain; charset=x, text/plain',
      'text/plain; charset=x, text/html',
      'é/x',
    );
    const contentType = fc.oneof(
      fc.constant(null),
      fc.array(single, { minLength: 1, maxLength: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.record({ body: fc.string({ maxLength: 6 }), contentType }), (input) =>
        agree(probe, input),
      ),
      { numRuns: 200 },
    );
  });

  it('a FormData body, read back by Response.formData(), keeps its entries (the realm round trip)', async () => {
    const probe = `async (entries) => {
      ${HELPERS}
      const form = new FormData();
      for (const [name, value] of entries) {
        if ('s' in value) form.append(name, value.s);
        else if (value.filename === null) form.append(name, blobOf(value));
        else form.append(name, blobOf(value), value.filename);
      }
      const again = await new Response(form).formData();
      return describeForm(again);
    }`;
    await fc.assert(
      fc.asyncProperty(fc.array(wireEntry, { maxLength: 4 }), (input) => agree(probe, input)),
      { numRuns: 100 },
    );
  });
});

describe('streams of Blobs and bodies', () => {
  const readAll = `
    const readAll = async (stream) => {
      const reader = stream.getReader();
      const out = [];
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return out;
        if (!(value instanceof Uint8Array)) return 'not bytes: ' + Object.prototype.toString.call(value);
        for (let i = 0; i < value.length; i++) out.push(value[i]);
      }
    };
  `;

  it('Blob.stream() gives the bytes, in chunks of bytes, as in Node (past one chunk too)', async () => {
    const probe = `async ({ parts, repeat }) => {
      ${HELPERS}
      ${readAll}
      const blob = new Blob([...parts.map(part), 'x'.repeat(repeat)]);
      const stream = blob.stream();
      const all = await readAll(stream);
      return [stream instanceof ReadableStream, Array.isArray(all) ? all.length : all, Array.isArray(all) ? all.slice(-3) : null, bytes(await blob.arrayBuffer()).length];
    }`;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          parts: fc.array(part, { maxLength: 3 }),
          repeat: fc.oneof(fc.constant(0), fc.integer({ min: 65_530, max: 140_000 })),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: 40 },
    );
  });

  it('a body read from its stream is used; one whose stream is locked or read is unusable, as in Node', async () => {
    const probe = `async ({ kind, steps }) => {
      ${readAll}
      const body = kind === 'null' ? null : kind === 'text' ? 'héllo' : kind === 'bytes' ? new Uint8Array([1, 2, 3]) : new Blob(['blob']);
      const response = new Response(body);
      const seen = [response.body === null, response.body === response.body, response.bodyUsed];
      let reader = null;
      for (const step of steps) {
        try {
          if (step === 'getReader') reader = response.body.getReader();
          else if (step === 'read') seen.push(reader === null ? 'no reader' : await readAll({ getReader: () => reader }));
          else if (step === 'text') seen.push(await response.text());
          else if (step === 'clone') seen.push(typeof response.clone());
          else if (step === 'locked') seen.push(response.body === null ? null : response.body.locked);
          seen.push(response.bodyUsed);
        } catch (error) {
          seen.push(errorName(error));
        }
      }
      return seen;
    }`;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          kind: fc.constantFrom('null', 'text', 'bytes', 'blob'),
          steps: fc.array(fc.constantFrom('getReader', 'read', 'text', 'clone', 'locked'), {
            maxLength: 5,
          }),
        }),
        (input) => agree(probe, input),
      ),
      { numRuns: 200 },
    );
  });
});
