export * from './enrollment.js';
export * from './attribution.js';
