export * from './wrap.js';
export * from './syntax.js';
export * from './instead-of-node.js';
