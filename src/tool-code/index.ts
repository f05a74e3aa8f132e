export * from './wrap.js';
export * from './syntax.js';
