/**
 * The name of the generated admin token's file in the data directory. A module of its own
 * because the CLI reads that file too, and should not load the registry's configuration (and
 * its schema library) to learn a file name.
 */
export const ADMIN_TOKEN_FILE = 'admin-token';
