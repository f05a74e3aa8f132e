export * from './messages.js';
export * from './framing.js';
export * from './error-codes.js';
export * from './channel.js';
export * from './call-failure-codes.js';
