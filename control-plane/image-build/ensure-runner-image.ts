/**
 * Makes sure the runner image exists and returns the tag to run. The tag is
 * content-addressed — a hash of Dockerfile.runner, the harness bundle and the
 * base — so a harness change builds a new image and an unchanged one is reused
 * after a single `inspect`.
 *
 * Bases: `registry` builds FROM the Node image (pulled by the build if
 * missing; default the Active LTS line's slim image); `local` builds FROM
 * `mcphost-node-base:<version>`, a scratch image holding the host's own node,
 * or the pinned LTS node from npm when the host's line is past its end of life
 * (`lts-node.ts`; works with no container registry at all); `auto` (the
 * default) uses the Node image when the engine already has it, else a runner
 * already built on the local base, else tries the registry for a short while,
 * else falls back to local and says why. The base is the caller's to give:
 * RUNNER_BASE is a setting of the configuration table (`readSetting('runnerBase')`
 * outside the control plane); nothing here reads the environment.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import { z } from 'zod';
import { McphostError } from '../errors.js';
import { packBuildContext } from './build-context.js';
import { buildImage, imageExists, messageOf, pullImage } from './image-builds.js';
import { ensureLocalNodeBase } from './local-node-base.js';
import { chooseLocalNode } from './lts-node.js';
import { LTS_NODE_IMAGE } from './node-lines.js';
import { defaultHarnessDir, runnerDockerfilePath } from './repo-paths.js';
import { describeProblems } from '../validation-problems.js';

/** Where the runner's Node comes from. */
export const RunnerBase = z.enum(['auto', 'registry', 'local']);
export type RunnerBase = z.infer<typeof RunnerBase>;

/** Node image of the registry path: the Active LTS line's (`node-lines.ts`). */
export const DEFAULT_NODE_IMAGE = LTS_NODE_IMAGE;

/** Repository part of every runner image tag. */
export const RUNNER_IMAGE_REPOSITORY = 'mcphost-runner';

/** Options of {@link ensureRunnerImage}. */
export interface EnsureRunnerImageOptions {
  /** Engine to build on; default `new Dockerode()` (DOCKER_HOST or /var/run/docker.sock). */
  docker?: Dockerode;
  /** Where the runner's Node comes from: RUNNER_BASE. */
  base: RunnerBase;
  /** Node image for the registry path; default {@link DEFAULT_NODE_IMAGE}. */
  nodeImage?: string;
  /** Folder holding harness.mjs, lodash.min.js and context-scripts.json; default `<repo>/dist/runner`. */
  harnessDir?: string;
  /** Folder the local base's LTS node is cached in; default `~/.cache/mcphost/node`. */
  nodeCacheDir?: string;
  /** How long `auto` tries the registry before falling back to local, in ms; default 15 000. */
  registryTimeoutMs?: number;
  /** Receives progress and decisions, one line each; default: dropped. */
  log?: (line: string) => void;
}

const OptionsSchema = z.object({
  base: RunnerBase,
  nodeImage: z.string().min(1).optional(),
  harnessDir: z.string().min(1).optional(),
  nodeCacheDir: z.string().min(1).optional(),
  registryTimeoutMs: z.number().int().nonnegative().optional(),
});

/** The files the runner image is built from. */
interface RunnerIngredients {
  dockerfile: Buffer;
  harness: Buffer;
  lodash: Buffer;
  contextScripts: Buffer;
}

/** A resolved base: the image to build FROM (if known yet) and what identifies it in the tag. */
interface ResolvedBase {
  descriptor: string;
  /** Image to pass as NODE_IMAGE; for local it is built only when needed. */
  nodeImage: () => Promise<string>;
}

/** Ensures the runner image exists (building it if needed) and returns its tag. */
export async function ensureRunnerImage(options: EnsureRunnerImageOptions): Promise<string> {
  const parsed = OptionsSchema.safeParse(options);
  if (!parsed.success) throw new TypeError(`ensureRunnerImage: ${describeProblems(parsed.error)}`);
  const base = parsed.data.base;
  const docker = options.docker ?? new Dockerode();
  const log = options.log ?? (() => {});
  const nodeImage = options.nodeImage ?? DEFAULT_NODE_IMAGE;
  const ingredients = await readIngredients(options.harnessDir ?? defaultHarnessDir());

  const local = localBase(docker, options.nodeCacheDir, log);
  let resolved: ResolvedBase;
  if (base === 'local') resolved = await local();
  else if (base === 'registry') resolved = await registryBase(docker, nodeImage, log);
  else
    resolved = await autoBase(
      docker,
      nodeImage,
      ingredients,
      local,
      options.registryTimeoutMs ?? 15_000,
      log,
    );

  const tag = runnerImageTag(ingredients, resolved.descriptor);
  if (await imageExists(docker, tag)) return tag;

  const from = await resolved.nodeImage();
  log(`building ${tag} FROM ${from}`);
  const context = await packBuildContext([
    { name: 'Dockerfile', content: ingredients.dockerfile },
    { name: 'harness.mjs', content: ingredients.harness },
    { name: 'lodash.min.js', content: ingredients.lodash },
    { name: 'context-scripts.json', content: ingredients.contextScripts },
  ]);
  await buildImage(docker, context, {
    tag,
    buildArgs: { NODE_IMAGE: from },
    labels: { 'mcphost.runner-base': resolved.descriptor },
    log,
  });
  log(`built ${tag}`);
  return tag;
}

/** The content-addressed tag for these ingredients on this base. */
export function runnerImageTag(ingredients: RunnerIngredients, baseDescriptor: string): string {
  const hash = createHash('sha256');
  for (const part of [
    ingredients.dockerfile,
    ingredients.harness,
    ingredients.lodash,
    ingredients.contextScripts,
    Buffer.from(baseDescriptor),
  ]) {
    // Length prefixes keep two different splits of the same bytes apart.
    hash.update(`${part.length}:`);
    hash.update(part);
  }
  return `${RUNNER_IMAGE_REPOSITORY}:${hash.digest('hex').slice(0, 16)}`;
}

async function readIngredients(harnessDir: string): Promise<RunnerIngredients> {
  const read = async (path: string, what: string): Promise<Buffer> => {
    try {
      return await readFile(path);
    } catch (error) {
      throw new McphostError(
        'ERR_IMAGE_BUILD',
        `cannot build the runner image: ${what} is missing at ${path} (build it first: npm run build:assets)`,
        { cause: error },
      );
    }
  };
  return {
    dockerfile: await read(runnerDockerfilePath(), 'Dockerfile.runner'),
    harness: await read(join(harnessDir, 'harness.mjs'), 'the harness bundle'),
    lodash: await read(join(harnessDir, 'lodash.min.js'), 'the lodash bundle'),
    contextScripts: await read(
      join(harnessDir, 'context-scripts.json'),
      'the scripts of tool contexts',
    ),
  };
}

/**
 * The local base, resolved once on first use: choosing its node may fetch the
 * LTS binary, which `auto` must not do when the Node image is already here.
 * Which node and why is logged when the base is built; an end-of-life node
 * kept for want of the LTS one is a warning on every start.
 */
function localBase(
  docker: Dockerode,
  cacheDir: string | undefined,
  log: (line: string) => void,
): () => Promise<ResolvedBase> {
  let resolved: Promise<ResolvedBase> | undefined;
  return () =>
    (resolved ??= chooseLocalNode({ cacheDir, log }).then((node) => {
      const choice = `local base node ${node.version} (${node.path}): ${node.reason}`;
      if (node.warning) log(`WARNING: ${choice}`);
      return {
        descriptor: `local:${node.version}:${process.arch}`,
        nodeImage: () => {
          if (!node.warning) log(choice);
          return ensureLocalNodeBase({ docker, nodePath: node.path, log });
        },
      };
    }));
}

async function registryBase(
  docker: Dockerode,
  nodeImage: string,
  log: (line: string) => void,
): Promise<ResolvedBase> {
  let id = await imageIdOf(docker, nodeImage);
  if (id === undefined) {
    log(`pulling ${nodeImage}`);
    await pullImage(docker, nodeImage, { timeoutMs: REGISTRY_PULL_TIMEOUT_MS, log });
    id = await imageIdOf(docker, nodeImage);
  }
  // The image id makes a newer pull of the same tag rebuild the runner.
  return { descriptor: `image:${nodeImage}@${id ?? 'unknown'}`, nodeImage: async () => nodeImage };
}

/** How long the explicit `registry` path waits for a pull, in ms. */
const REGISTRY_PULL_TIMEOUT_MS = 600_000;

async function autoBase(
  docker: Dockerode,
  nodeImage: string,
  ingredients: RunnerIngredients,
  local: () => Promise<ResolvedBase>,
  registryTimeoutMs: number,
  log: (line: string) => void,
): Promise<ResolvedBase> {
  if ((await imageIdOf(docker, nodeImage)) !== undefined)
    return registryBase(docker, nodeImage, log);
  // A runner already built offline is reused rather than waiting on a registry again.
  const localResolved = await local();
  if (await imageExists(docker, runnerImageTag(ingredients, localResolved.descriptor)))
    return localResolved;
  try {
    log(`${nodeImage} is not on this engine; trying the registry (up to ${registryTimeoutMs} ms)`);
    await pullImage(docker, nodeImage, { timeoutMs: registryTimeoutMs, log });
    return registryBase(docker, nodeImage, log);
  } catch (error) {
    log(
      `registry unusable (${messageOf(error)}); building on the local base (${localResolved.descriptor}) instead`,
    );
    return localResolved;
  }
}

async function imageIdOf(docker: Dockerode, name: string): Promise<string | undefined> {
  try {
    return ((await docker.getImage(name).inspect()) as { Id: string }).Id;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return undefined;
    throw new McphostError(
      'ERR_SANDBOX_UNAVAILABLE',
      `Docker engine did not answer: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
}
