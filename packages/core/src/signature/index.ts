export * from './executor-key.js';
export * from './signature-v2.js';
