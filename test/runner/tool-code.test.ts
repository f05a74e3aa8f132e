import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { checkToolSyntax, compileToolScript, wrapToolCode } from '../../src/tool-code/index.js';

describe('wrapToolCode', () => {
  it('makes the code the body of an async function of params, env, console, sdk', () => {
    expect(wrapToolCode('return 1')).toBe(
      '(async function (params, env, console, sdk) {\nreturn 1\n})',
    );
  });

  it('compiles so that runtime stack positions are those of the operator code', async () => {
    const code = 'const a = 1;\n\n  throw new Error("boom");';
    const tool = compileToolScript(code).runInNewContext() as () => Promise<unknown>;
    const error = (await tool().catch((e: unknown) => e)) as Error;
    expect(error.message).toBe('boom');
    expect(error.stack).toMatch(/tool\.js:3:9/);
  });
});

describe('checkToolSyntax', () => {
  it('accepts valid code, including await at the top of the body', () => {
    expect(checkToolSyntax('const x = await Promise.resolve(1);\nreturn x + params.n;')).toBeNull();
  });

  it('reports an error on line 1 with its column', () => {
    expect(checkToolSyntax('retur 1')).toEqual({
      message: 'Unexpected number',
      line: 1,
      column: 7,
    });
  });

  it('reports an error on a middle line, counting indentation', () => {
    expect(checkToolSyntax('const a = 1;\n  let b = ;\nreturn a')).toEqual({
      message: "Unexpected token ';'",
      line: 2,
      column: 11,
    });
  });

  it('counts tabs as one column', () => {
    expect(checkToolSyntax('const a = 1;\n\tlet b = ;')).toMatchObject({ line: 2, column: 10 });
  });

  it('reports an error on the last line', () => {
    expect(checkToolSyntax('const a = 1;\nconst b = 2;\nreturn a b;')).toEqual({
      message: "Unexpected identifier 'b'",
      line: 3,
      column: 10,
    });
  });

  it('places code that ends too early at the end of the last line', () => {
    expect(checkToolSyntax('const a = 1;\nreturn a +')).toEqual({
      message: 'Unexpected end of input',
      line: 2,
      column: 11,
    });
    expect(checkToolSyntax('if (x) {\n  return 1;')).toMatchObject({ line: 2, column: 12 });
  });

  it('reports an unterminated string where it starts', () => {
    expect(checkToolSyntax('const ok = 1;\nconst s = "abc;\nreturn s')).toEqual({
      message: 'Invalid or unexpected token',
      line: 2,
      column: 11,
    });
  });

  it('reports an unterminated template literal', () => {
    expect(checkToolSyntax('return `abc')).toMatchObject({
      message: 'Unexpected end of input',
      line: 1,
    });
  });

  it('refuses code that closes its function body and opens another', () => {
    const error = checkToolSyntax('}); globalThis.hacked = 1; (async function () {');
    expect(error).not.toBeNull();
    expect(error?.message).toMatch(/must stay inside its function body/);
  });

  it('runs nothing while checking', () => {
    const marker = `__mcphost_syntax_${process.pid}`;
    expect(checkToolSyntax(`globalThis.${marker} = 1; throw new Error("ran")`)).toBeNull();
    expect((globalThis as Record<string, unknown>)[marker]).toBeUndefined();
    expect(vm.runInNewContext(`typeof ${marker}`)).toBe('undefined');
  });
});
