export * from './enrollment.js';
