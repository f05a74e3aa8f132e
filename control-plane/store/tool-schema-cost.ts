/**
 * How much validating a value against a tool schema can cost, worked out
 * from the schema alone: the most work the validator may do at any one place
 * of a value (its *weight*). Validation then costs at most about
 * `weight × the value's size`, whatever the value.
 *
 * A validator applies several subschemas at one place of a value
 * (`allOf`/`anyOf`/`oneOf`/`not`/`if`/`then`/`else`, `$ref`), and each of
 * them applies subschemas at the value's children (`properties`, `items`…).
 * Each path of subschemas that reaches a place is one more evaluation of it
 * (ajv caches nothing between them). The weight adds every subschema that
 * may apply at a place, as often as it may apply, times what its keywords
 * cost there (a `pattern` costs its RE2 program per character, an `enum`
 * its entries…).
 *
 * Found by following every kind of place a value can have (each property
 * name the schema mentions, any other name, an array item) level by level,
 * carrying the subschemas that apply and how often:
 * - `unbounded`: following the value one level deeper brings back the same
 *   subschemas, more often (alternatives over a recursive `$ref`): a value
 *   nested 30 levels deep then takes a minute. Refused at save.
 * - `bounded` with a weight; past TOOL_SCHEMA_MAX_WEIGHT refused at save
 *   (definitions that `allOf` each other twice, 30 times over, are 2^30
 *   evaluations of one place).
 * - `unknown`: the schema uses what this reading does not follow
 *   (`$dynamicRef`, references to other `$id`s, pairwise `uniqueItems`), or
 *   has too many kinds of places to follow. Such a schema may be saved; its
 *   checks are treated as possibly slow (invocation/schema-checker.ts).
 *
 * The reading is conservative where it cannot know: every pattern of
 * `patternProperties` may match a name it does not know, every branch of an
 * `anyOf` may run. It never calls a schema cheaper than its validator is.
 */
import { RE2JS } from 're2js';

/** Largest weight a tool schema may have (see above): about 20 ms per KB of value at most. */
export const TOOL_SCHEMA_MAX_WEIGHT = 10_000;
/** Kinds of places followed at most before a schema is called `unknown`. */
const MAX_STATES = 4_000;
/**
 * Steps of the reading itself at most (subschema counts added up, about a
 * microsecond each) before a schema is called `unknown`, by default: it runs
 * on the control plane's thread, at save (as the compile does, which costs
 * as much).
 */
export const SCHEMA_COST_MAX_WORK = 500_000;

/** What validating against a schema can cost; see the file's comment. */
export type SchemaCost =
  | { readonly kind: 'bounded'; readonly weight: number }
  | { readonly kind: 'unbounded'; readonly path: string; readonly message: string }
  | { readonly kind: 'unknown'; readonly reason: string };

/** One subschema: where it is, and what it applies where. */
interface SchemaNode {
  readonly path: readonly string[];
  /** What its own keywords cost at the place it applies to. */
  cost: number;
  /** What testing each of a value's property names costs it (patternProperties, additionalProperties). */
  keyCost: number;
  /** Subschemas applied at the same place (allOf, anyOf, …, $ref). */
  readonly here: number[];
  /** Named properties. */
  readonly named: Map<string, number[]>;
  readonly patterns: { readonly test: (name: string) => boolean; readonly node: number }[];
  /** additionalProperties and unevaluatedProperties. */
  readonly otherNames: number[];
  readonly unevaluatedNames: number[];
  readonly propertyNames: number[];
  readonly prefixItems: number[];
  /** items, contains and unevaluatedItems: every item (past prefixItems for items). */
  readonly restItems: number[];
  readonly everyItem: number[];
}

/** Subschema id → how often it applies at one place (saturating at the weight bound). */
type Applied = Map<number, number>;

const SATURATED = TOOL_SCHEMA_MAX_WEIGHT + 1;
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

class NotFollowed extends Error {}
class Unbounded extends Error {
  constructor(
    readonly path: readonly string[],
    message: string,
  ) {
    super(message);
  }
}

/**
 * The cost of validating against `schema` (a schema that compiles; see the
 * file's comment); `maxWork` bounds the reading's own steps (default
 * SCHEMA_COST_MAX_WORK), past which the answer is `unknown`.
 */
export function schemaCost(
  schema: Record<string, unknown>,
  maxWork = SCHEMA_COST_MAX_WORK,
): SchemaCost {
  try {
    const graph = new SchemaGraph(schema, new Work(maxWork));
    return { kind: 'bounded', weight: new PlaceWalk(graph).maxWeight() };
  } catch (error) {
    if (error instanceof Unbounded) {
      return { kind: 'unbounded', path: error.path.join('.'), message: error.message };
    }
    if (error instanceof NotFollowed) return { kind: 'unknown', reason: error.message };
    throw error;
  }
}

/** Every subschema of a schema, its references resolved. */
class SchemaGraph {
  readonly nodes: SchemaNode[] = [];
  readonly work: Work;
  /** Subschema objects by JSON pointer from their resource's root, and by `$anchor`. */
  readonly #byPointer = new Map<string, number>();
  readonly #byAnchor = new Map<string, number>();
  readonly #references: { node: number; ref: string }[] = [];
  /** Closures of `here` (memoised), and the nodes being closed (a loop). */
  readonly #closures = new Map<number, Applied>();
  readonly #closing = new Set<number>();

  constructor(root: Record<string, unknown>, work: Work) {
    this.work = work;
    this.#add(root, [], '');
    for (const { node, ref } of this.#references) this.nodes[node]!.here.push(this.#resolve(ref));
  }

  /** Whether subschema `id` applies anything to the value's children. */
  descends(id: number): boolean {
    const node = this.nodes[id]!;
    return (
      node.named.size > 0 ||
      node.patterns.length > 0 ||
      node.otherNames.length > 0 ||
      node.unevaluatedNames.length > 0 ||
      node.propertyNames.length > 0 ||
      node.prefixItems.length > 0 ||
      node.restItems.length > 0 ||
      node.everyItem.length > 0
    );
  }

  /** Whether a `$ref` or an applicator names subschema `id` (where a loop closes). */
  isReferenced(id: number): boolean {
    return this.nodes.some((node) => node.here.includes(id));
  }

  /** Each subschema applied where `id` applies, with how often (itself once). */
  closure(id: number): Applied {
    const known = this.#closures.get(id);
    if (known) return known;
    if (this.#closing.has(id)) {
      throw new Unbounded(
        this.nodes[id]!.path,
        'refers back to itself without going into the value: validation would never end',
      );
    }
    this.#closing.add(id);
    const applied: Applied = new Map([[id, 1]]);
    for (const child of this.nodes[id]!.here) addTimes(applied, this.closure(child), 1, this.work);
    this.#closing.delete(id);
    this.#closures.set(id, applied);
    return applied;
  }

  #add(schema: unknown, path: string[], pointer: string): number {
    const id = this.nodes.length;
    const node: SchemaNode = {
      path,
      cost: 1,
      keyCost: 0,
      here: [],
      named: new Map(),
      patterns: [],
      otherNames: [],
      unevaluatedNames: [],
      propertyNames: [],
      prefixItems: [],
      restItems: [],
      everyItem: [],
    };
    this.nodes.push(node);
    this.#byPointer.set(pointer, id);
    if (!isObject(schema)) return id;
    if (typeof schema.$id === 'string' && path.length > 0) {
      // A reference into another resource is not followed: the schema is `unknown`.
      throw new NotFollowed(`${[...path, '$id'].join('.')} starts a resource of its own`);
    }
    if (typeof schema.$anchor === 'string') this.#byAnchor.set(schema.$anchor, id);
    if (typeof schema.$ref === 'string') this.#references.push({ node: id, ref: schema.$ref });
    if (schema.$dynamicRef !== undefined || schema.$recursiveRef !== undefined) {
      throw new NotFollowed(`${path.join('.')} uses a dynamic reference`);
    }
    node.cost += keywordCost(schema, path);
    const child = (keyword: string, value: unknown, ...more: string[]) =>
      this.#add(
        value,
        [...path, keyword, ...more],
        `${pointer}/${[keyword, ...more].map(escape).join('/')}`,
      );
    for (const keyword of ['$defs', 'definitions'] as const) {
      if (isObject(schema[keyword])) {
        for (const [name, value] of Object.entries(schema[keyword])) child(keyword, value, name);
      }
    }
    for (const keyword of ['allOf', 'anyOf', 'oneOf'] as const) {
      const list = schema[keyword];
      if (Array.isArray(list))
        list.forEach((value, i) => node.here.push(child(keyword, value, String(i))));
    }
    for (const keyword of ['not', 'if', 'then', 'else'] as const) {
      if (schema[keyword] !== undefined) node.here.push(child(keyword, schema[keyword]));
    }
    for (const keyword of ['dependentSchemas', 'dependencies'] as const) {
      if (isObject(schema[keyword])) {
        for (const [name, value] of Object.entries(schema[keyword])) {
          // `dependencies` may list names (dependentRequired's older form): not a subschema.
          if (!Array.isArray(value)) node.here.push(child(keyword, value, name));
        }
      }
    }
    if (isObject(schema.properties)) {
      for (const [name, value] of Object.entries(schema.properties)) {
        node.named.set(name, [child('properties', value, name)]);
      }
    }
    if (isObject(schema.patternProperties)) {
      for (const [pattern, value] of Object.entries(schema.patternProperties)) {
        const compiled = readPattern(pattern);
        node.keyCost += compiled.cost;
        node.patterns.push({
          test: (name) => compiled.regExp.test(name),
          node: child('patternProperties', value, pattern),
        });
      }
    }
    if (schema.additionalProperties !== undefined) {
      node.keyCost += 1 + node.named.size;
      node.otherNames.push(child('additionalProperties', schema.additionalProperties));
    }
    if (schema.unevaluatedProperties !== undefined) {
      node.keyCost += 1;
      node.unevaluatedNames.push(child('unevaluatedProperties', schema.unevaluatedProperties));
    }
    if (schema.propertyNames !== undefined) {
      node.propertyNames.push(child('propertyNames', schema.propertyNames));
    }
    if (Array.isArray(schema.prefixItems)) {
      schema.prefixItems.forEach((value, i) =>
        node.prefixItems.push(child('prefixItems', value, String(i))),
      );
    }
    if (schema.items !== undefined) node.restItems.push(child('items', schema.items));
    for (const keyword of ['contains', 'unevaluatedItems'] as const) {
      if (schema[keyword] !== undefined) node.everyItem.push(child(keyword, schema[keyword]));
    }
    return id;
  }

  /** The subschema a `$ref` names: `#`, `#/json/pointer` or `#anchor` of this schema. */
  #resolve(ref: string): number {
    const found =
      ref.startsWith('#/') || ref === '#'
        ? this.#byPointer.get(decodeURIComponent(ref.slice(1)))
        : ref.startsWith('#')
          ? this.#byAnchor.get(ref.slice(1))
          : undefined;
    if (found === undefined) throw new NotFollowed(`$ref "${ref}" is not followed`);
    return found;
  }
}

/** A kind of child place: a property of a name, of any other name, a name itself, an item at an index. */
type Step =
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'otherName' }
  | { readonly kind: 'propertyName' }
  /** At `index`, or any later index once it is past every prefixItems. */
  | { readonly kind: 'item'; readonly index: number };

/**
 * Every kind of place of a value, level by level, with the subschemas that
 * apply there; the largest weight found, or Unbounded.
 */
class PlaceWalk {
  readonly #graph: SchemaGraph;
  readonly #seen = new Set<string>();
  /** The places from the value's root to the one followed now, and the step taken from each. */
  readonly #ancestors: { applied: Applied; step?: Step }[] = [];
  #maxWeight = 0;

  constructor(graph: SchemaGraph) {
    this.#graph = graph;
  }

  maxWeight(): number {
    this.#visit(this.#graph.closure(0), 0);
    return this.#maxWeight;
  }

  #visit(applied: Applied, entryCost: number): void {
    const weight = Math.min(entryCost + this.#weightOf(applied), SATURATED);
    this.#maxWeight = Math.max(this.#maxWeight, weight);
    if (weight > TOOL_SCHEMA_MAX_WEIGHT) this.#tooHeavy(applied, weight);
    // What applies below depends only on the subschemas that go into the value's children:
    // places where those are the same have the same places below them.
    const descending = this.#descending(applied);
    if (descending.size === 0) return;
    this.#checkGrowth(descending);
    const key = keyOf(descending);
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    if (this.#seen.size > MAX_STATES) {
      throw new NotFollowed(`more than ${MAX_STATES} kinds of places to follow`);
    }
    const here = { applied: descending, step: undefined as Step | undefined };
    this.#ancestors.push(here);
    for (const step of this.#steps(descending)) {
      const next = this.#take(descending, step);
      if (next === undefined) continue;
      here.step = step;
      this.#visit(next[0], next[1]);
    }
    this.#ancestors.pop();
  }

  /** The part of `applied` that applies subschemas to the value's children. */
  #descending(applied: Applied): Applied {
    this.#graph.work.add(applied.size);
    const descending: Applied = new Map();
    for (const [id, times] of applied) {
      if (this.#graph.descends(id)) descending.set(id, times);
    }
    return descending;
  }

  /**
   * The same subschemas as at a place above, some more often: the steps
   * from there, taken again, may multiply the work without end. They do
   * when the increase is still there after as many more rounds as there
   * are subschemas (an increase that dies out does so within that many:
   * one that lasts longer went round a cycle, which brings it back forever).
   */
  #checkGrowth(applied: Applied): void {
    for (let depth = 0; depth < this.#ancestors.length; depth++) {
      const above = this.#ancestors[depth]!.applied;
      this.#graph.work.add(1);
      if (!dominates(applied, above)) continue;
      const steps = this.#ancestors.slice(depth).map((ancestor) => ancestor.step!);
      let previous = applied;
      let grows = true;
      for (let round = 0; round <= applied.size && grows; round++) {
        let next: Applied | undefined = previous;
        for (const step of steps) {
          const taken: Applied | undefined = next && this.#take(next, step)?.[0];
          next = taken && this.#descending(taken);
        }
        grows = next !== undefined && dominates(next, previous);
        if (next !== undefined) previous = next;
      }
      if (!grows) continue;
      const grew = this.#mostGrown(previous, above);
      throw new Unbounded(
        this.#graph.nodes[grew]!.path,
        `is applied more often at each level of a nested value (${above.get(grew) ?? 0} times, ` +
          `then ${applied.get(grew)}, a few levels further ${previous.get(grew)}): alternatives ` +
          'that each go into the same part of the value repeat the work below it, so a value ' +
          'nested a few dozen levels deep takes minutes to check; let only one alternative go into it',
      );
    }
  }

  /** The subschema whose count grew most, preferring one a `$ref` names (where the loop closes). */
  #mostGrown(now: Applied, before: Applied): number {
    let best = -1;
    let grown = 0;
    for (const [id, times] of now) {
      const gain = (times - (before.get(id) ?? 0)) * (this.#graph.isReferenced(id) ? 2 : 1);
      if (gain > best) [best, grown] = [gain, id];
    }
    return grown;
  }

  /** Unbounded, naming the subschema that weighs most at this place, and why. */
  #tooHeavy(applied: Applied, weight: number): never {
    let heaviest = 0;
    let most = -1;
    for (const [id, times] of applied) {
      const weighs = times * this.#graph.nodes[id]!.cost;
      if (weighs > most) [most, heaviest] = [weighs, id];
    }
    const node = this.#graph.nodes[heaviest]!;
    const times = applied.get(heaviest)!;
    const steps = weight >= SATURATED ? `more than ${TOOL_SCHEMA_MAX_WEIGHT}` : `about ${weight}`;
    const why =
      times > 1
        ? `it is applied ${times >= SATURATED ? 'over and over' : `${times} times`} there`
        : `its keywords cost ${node.cost} steps there (a pattern costs its RE2 program for every character, an enum its members)`;
    throw new Unbounded(
      node.path,
      `makes checking one place of a value take ${steps} steps (at most ${TOOL_SCHEMA_MAX_WEIGHT}): ` +
        `${why}; a value of a few KB would take longer than the check's time limit`,
    );
  }

  #weightOf(applied: Applied): number {
    let weight = 0;
    for (const [id, times] of applied) weight += times * this.#graph.nodes[id]!.cost;
    return weight;
  }

  /** The kinds of child places worth following: each name mentioned, any other, a name, each item index. */
  #steps(applied: Applied): Step[] {
    const names = new Set<string>();
    let prefix = 0;
    for (const id of applied.keys()) {
      const node = this.#graph.nodes[id]!;
      for (const name of node.named.keys()) names.add(name);
      prefix = Math.max(prefix, node.prefixItems.length);
    }
    const steps: Step[] = [...names].map((name) => ({ kind: 'name', name }));
    steps.push({ kind: 'otherName' }, { kind: 'propertyName' });
    for (let index = 0; index <= prefix; index++) steps.push({ kind: 'item', index });
    return steps;
  }

  /** The subschemas applied one `step` down, and what testing the name costs; undefined when none. */
  #take(applied: Applied, step: Step): [Applied, number] | undefined {
    const next: Applied = new Map();
    let cost = 0;
    this.#graph.work.add(applied.size);
    for (const [id, times] of applied) {
      const node = this.#graph.nodes[id]!;
      const targets: number[] = [];
      if (step.kind === 'name' || step.kind === 'otherName') {
        cost += times * node.keyCost;
        const name = step.kind === 'name' ? step.name : undefined;
        const named = name === undefined ? undefined : node.named.get(name);
        // A name nobody mentions may match any pattern.
        this.#graph.work.add(node.patterns.length);
        const matching = node.patterns.filter((p) => name === undefined || p.test(name));
        targets.push(...(named ?? []), ...matching.map((p) => p.node), ...node.unevaluatedNames);
        if (named === undefined && (name === undefined || matching.length === 0)) {
          targets.push(...node.otherNames);
        }
      } else if (step.kind === 'propertyName') {
        targets.push(...node.propertyNames);
      } else {
        const prefixed = node.prefixItems[step.index];
        targets.push(...(prefixed === undefined ? node.restItems : [prefixed]), ...node.everyItem);
      }
      for (const target of targets)
        addTimes(next, this.#graph.closure(target), times, this.#graph.work);
    }
    return next.size === 0 ? undefined : [next, cost];
  }
}

/** `now` applies the same subschemas as `before`, each at least as often, one more often. */
function dominates(now: Applied, before: Applied): boolean {
  if (now.size !== before.size) return false;
  let more = false;
  for (const [id, times] of now) {
    const earlier = before.get(id);
    if (earlier === undefined || times < earlier) return false;
    if (times > earlier) more = true;
  }
  return more;
}

/** What a schema's own keywords cost where it applies (beyond 1 for the schema itself). */
function keywordCost(schema: Record<string, unknown>, path: string[]): number {
  let cost = 0;
  if (typeof schema.pattern === 'string') cost += readPattern(schema.pattern).cost;
  // An enum or const of objects is compared member by member: about its JSON's size.
  for (const keyword of ['enum', 'const'] as const) {
    if (schema[keyword] !== undefined) {
      const listed = Array.isArray(schema[keyword]) ? schema[keyword].length : 1;
      cost += listed + Math.ceil(JSON.stringify(schema[keyword]).length / 16);
    }
  }
  if (Array.isArray(schema.required)) cost += schema.required.length;
  if (isObject(schema.properties)) cost += Object.keys(schema.properties).length;
  if (isObject(schema.dependentRequired)) {
    for (const names of Object.values(schema.dependentRequired)) {
      cost += Array.isArray(names) ? names.length + 1 : 1;
    }
  }
  if (schema.uniqueItems === true && !itemsAreScalar(schema)) {
    // Compared two by two: quadratic in the array, not a weight per place.
    throw new NotFollowed(`${[...path, 'uniqueItems'].join('.')} compares items two by two`);
  }
  return cost;
}

function itemsAreScalar(schema: Record<string, unknown>): boolean {
  const types = isObject(schema.items) ? schema.items.type : undefined;
  const listed = typeof types === 'string' ? [types] : Array.isArray(types) ? types : [];
  return listed.length > 0 && listed.every((type) => SCALAR_TYPES.has(type as string));
}

/** Patterns read lately (RE2 compiles in about a millisecond each; schemas repeat them). */
const READ_PATTERNS = 512;
const readPatterns = new Map<string, { regExp: RE2JS; cost: number }>();

/**
 * A pattern compiled by RE2, and what RE2 pays per character for it: about
 * its program's size (a counted repetition `x{1000}` is a thousand
 * instructions). re2js does not publish the program; the pattern's length,
 * four times over, stands in when it cannot be read.
 */
function readPattern(pattern: string): { regExp: RE2JS; cost: number } {
  let read = readPatterns.get(pattern);
  if (read === undefined) {
    const regExp = RE2JS.compile(pattern);
    const program = (regExp as unknown as { re2Input?: { prog?: { inst?: unknown[] } } }).re2Input
      ?.prog?.inst;
    read = { regExp, cost: Array.isArray(program) ? program.length : pattern.length * 4 };
    if (readPatterns.size >= READ_PATTERNS) readPatterns.delete(readPatterns.keys().next().value!);
    readPatterns.set(pattern, read);
  }
  return read;
}

/** Counts the reading's own steps (see SCHEMA_COST_MAX_WORK). */
class Work {
  readonly #max: number;
  #done = 0;

  constructor(max: number) {
    this.#max = max;
  }

  add(steps: number): void {
    this.#done += steps;
    if (this.#done > this.#max) throw new NotFollowed('too large to work out in time');
  }
}

function addTimes(into: Applied, from: Applied, times: number, work: Work): void {
  work.add(from.size);
  for (const [id, count] of from) {
    into.set(id, Math.min((into.get(id) ?? 0) + count * times, SATURATED));
  }
}

function keyOf(applied: Applied): string {
  return [...applied]
    .sort(([a], [b]) => a - b)
    .map(([id, times]) => `${id}:${times}`)
    .join(',');
}

function escape(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
