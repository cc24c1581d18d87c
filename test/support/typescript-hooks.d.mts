/** Compiles the sources (absolute paths) whose JavaScript is not kept yet, all at once; resolves to how many (typescript-hooks.mjs). */
export declare function compileAhead(paths: readonly string[]): Promise<number>;
