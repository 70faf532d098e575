// pnpm hooks for this workspace. One concern: native dependencies (better-sqlite3, the worker's
// outbox) that compile from source must find Node's C headers on a machine that cannot
// download them.
//
// When no prebuilt binary fits, better-sqlite3's install script runs `node-gyp rebuild`, and
// node-gyp downloads the headers of the running Node unless `nodedir` names a folder that has
// them. pnpm 11+ hands lifecycle scripts only a short list of variables and none of the user's
// npm settings, so a `nodedir` in ~/.npmrc or an exported npm_config_nodedir never reaches
// node-gyp. This hook passes it on explicitly (`extraEnv`):
// - an npm_config_nodedir exported by the user wins (an explicit choice);
// - else the installation prefix of the Node that runs pnpm's hooks, when it ships its headers
//   (official builds and Debian's nodejs-dev do: <prefix>/include/node/node.h);
// - else nothing: node-gyp downloads as usual.
// Where a prebuilt binary is downloaded, node-gyp never runs and this changes nothing.
'use strict';

const { existsSync } = require('node:fs');
const { dirname, join } = require('node:path');

/** The folder node-gyp should take Node's headers from, or undefined to let it download them. */
function nodeHeadersDir() {
  const explicit = process.env.npm_config_nodedir;
  if (explicit) return explicit;
  const prefix = dirname(dirname(process.execPath));
  return existsSync(join(prefix, 'include', 'node', 'node.h')) ? prefix : undefined;
}

module.exports = {
  hooks: {
    updateConfig(config) {
      const nodedir = nodeHeadersDir();
      if (nodedir === undefined) return config;
      return { ...config, extraEnv: { ...config.extraEnv, npm_config_nodedir: nodedir } };
    },
  },
};
