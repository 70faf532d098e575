// Test support: `express4` is express 4 installed under an alias (package.json devDependencies),
// to run the express adapter against both majors; typed with express 5's types, which the tests
// use only for `express()`, `json()` and `use`/`post`.
declare module 'express4' {
  import express from 'express';
  export default express;
}
