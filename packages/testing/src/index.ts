// The public API of @ax/testing: fixtures for test files (a fresh database, namespaces with
// Redis and AMQP cleanup, a manual clock, polling, real processes, programs a test requires).
export * from './amqp.js';
export * from './clock.js';
export * from './database.js';
export * from './mariadb-server.js';
export * from './namespace.js';
export * from './processes.js';
export * from './redis.js';
export * from './requires.js';
export * from './wait.js';
export * from './rabbitmq-server.js';
export * from './redis-server.js';
export * from './tcp-proxy.js';
export * from './redis-sentinel.js';
export * from './worker-enrollment.js';
