/**
 * The web page's built assets (dist/web, written by web/build.ts during `npm run build`): read
 * once at start-up, kept in memory with their gzip and brotli forms (a few tens of KB), and
 * served with immutable caching, since every file name carries its content hash. The build
 * compresses them (brotli at its best quality takes about 0.4 s of CPU for these files, which
 * every start paid before), and writes each form beside its file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { Request, RequestHandler, Response } from 'express';
import { etagOf, notModified } from '../http/conditional.js';

/** What web/build.ts writes to dist/web/manifest.json (file names relative to assets/). */
export interface WebManifest {
  script: string;
  style: string;
  icon: string;
  /** Chunks the entry script imports statically: the page preloads them beside it. */
  preload: string[];
  /** Every file under assets/. */
  files: string[];
}

/** A body held in memory, ready to send: its encodings, type and validator. */
export interface CachedBody {
  body: Buffer;
  gzip?: Buffer;
  br?: Buffer;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
};

/** The Content-Type an asset is served with, by its file name. */
export const assetType = (file: string): string => TYPES[path.extname(file)] ?? 'application/octet-stream';

/**
 * Where `npm run build` put the assets: dist/web beside the repository's src/ (running from
 * source with tsx) or beside dist/src/ (running the build).
 */
export function findAssetsDir(): string | undefined {
  const candidates = ['../../dist/web/', '../../web/'].map((rel) => fileURLToPath(new URL(rel, import.meta.url)));
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'manifest.json')));
}

/** The compressed forms of an asset, as web/build.ts writes them beside it: `<file>.gz`, `<file>.br`. */
export const ENCODED_FORMS = [
  { encoding: 'gzip', suffix: '.gz' },
  { encoding: 'br', suffix: '.br' },
] as const;

/** Compressed forms of a text body; kept only when they are smaller. */
export function compressed(body: Buffer): { gzip?: Buffer; br?: Buffer } {
  if (body.length < 512) return {};
  const gzip = gzipSync(body, { level: 9 });
  const br = brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } });
  return { ...(gzip.length < body.length ? { gzip } : {}), ...(br.length < body.length ? { br } : {}) };
}

/** Whether a body of this type is worth compressing (text; images other than SVG are compressed already). */
export const isCompressible = (type: string): boolean => type.startsWith('text/') || type.startsWith('image/svg');

export function cachedBody(body: Buffer, type: string): CachedBody {
  return { body, type, etag: etagOf(body), ...(isCompressible(type) ? compressed(body) : {}) };
}

/**
 * Sends a cached body: 304 when the client has it (the same validator rules as every cacheable
 * answer, http/conditional.ts), otherwise in the best encoding the client accepts. Another
 * status than 200 (the page's "not found") carries no validator: conditions apply to 2xx answers only.
 */
export function sendCached(req: Request, res: Response, item: CachedBody, cacheControl: string, status = 200): void {
  res.setHeader('Content-Type', item.type);
  res.setHeader('Cache-Control', cacheControl);
  res.vary('Accept-Encoding');
  if (status === 200) {
    res.setHeader('ETag', item.etag);
    if (notModified(req, item.etag)) {
      res.status(304).end();
      return;
    }
  }
  res.status(status);
  const encoding = req.acceptsEncodings(['br', 'gzip', 'identity']);
  const body = encoding === 'br' && item.br ? item.br : encoding === 'gzip' && item.gzip ? item.gzip : item.body;
  if (body !== item.body) res.setHeader('Content-Encoding', encoding as string);
  res.setHeader('Content-Length', String(body.length));
  if (req.method === 'HEAD') res.end();
  else res.end(body);
}

export class WebAssets {
  private readonly assets = new Map<string, CachedBody>();

  private constructor(
    readonly manifest: WebManifest,
    dir: string,
  ) {
    for (const file of manifest.files) {
      const where = path.join(dir, 'assets', file);
      const body = fs.readFileSync(where);
      const item: CachedBody = { body, type: assetType(file), etag: etagOf(body) };
      for (const { encoding, suffix } of ENCODED_FORMS) {
        if (fs.existsSync(where + suffix)) item[encoding] = fs.readFileSync(where + suffix);
      }
      this.assets.set(file, item);
    }
  }

  static load(dir: string): WebAssets {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as WebManifest;
    return new WebAssets(manifest, dir);
  }

  /** GET/HEAD /assets/<file>: from memory, cached for a year (the name changes with the content). */
  handler(): RequestHandler {
    return (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      const asset = this.assets.get(req.path.replace(/^\//, ''));
      if (!asset) return next();
      sendCached(req, res, asset, 'public, max-age=31536000, immutable');
    };
  }
}
