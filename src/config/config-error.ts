/**
 * Invalid configuration: the registry refuses to start (exit 2) with the message, one line
 * naming the setting, what is wrong and how to fix it. A module of its own so that modules read
 * by the configuration (setting-files.ts) can throw it too.
 */
export class ConfigError extends Error {}
