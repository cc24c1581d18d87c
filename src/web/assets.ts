/**
 * The web page's built assets (dist/web, written by web/build.ts during `npm run build`): read
 * once at start-up, kept in memory with their gzip and brotli forms (a few tens of KB), and
 * served with immutable caching, since every file name carries its content hash.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { Request, RequestHandler, Response } from 'express';

/** What web/build.ts writes to dist/web/manifest.json (file names relative to assets/). */
export interface WebManifest {
  script: string;
  style: string;
  icon: string;
  preload: string[];
  files: string[];
}

interface Asset {
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

/**
 * Where `npm run build` put the assets: dist/web beside the repository's src/ (running from
 * source with tsx) or beside dist/src/ (running the build).
 */
export function findAssetsDir(): string | undefined {
  const candidates = ['../../dist/web/', '../../web/'].map((rel) => fileURLToPath(new URL(rel, import.meta.url)));
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'manifest.json')));
}

export const etagOf = (body: Buffer | string) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/** Compressed forms of a text answer; kept only when they are smaller. */
export function compressed(body: Buffer): { gzip?: Buffer; br?: Buffer } {
  if (body.length < 512) return {};
  const gzip = gzipSync(body, { level: 9 });
  const br = brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } });
  return { ...(gzip.length < body.length ? { gzip } : {}), ...(br.length < body.length ? { br } : {}) };
}

/** The client's cached copy (If-None-Match) is this one. */
export const isFresh = (req: Request, etag: string): boolean =>
  (req.headers['if-none-match'] ?? '').split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);

/** Sends a body in the best encoding the client accepts. */
export function sendEncoded(req: Request, res: Response, asset: { body: Buffer; gzip?: Buffer; br?: Buffer }): void {
  res.setHeader('Vary', 'Accept-Encoding');
  const encoding = req.acceptsEncodings(['br', 'gzip', 'identity']);
  const body = encoding === 'br' && asset.br ? asset.br : encoding === 'gzip' && asset.gzip ? asset.gzip : asset.body;
  if (body !== asset.body) res.setHeader('Content-Encoding', encoding as string);
  res.setHeader('Content-Length', String(body.length));
  if (req.method === 'HEAD') res.end();
  else res.end(body);
}

export class WebAssets {
  private readonly assets = new Map<string, Asset>();

  private constructor(
    readonly manifest: WebManifest,
    dir: string,
  ) {
    for (const file of manifest.files) {
      const body = fs.readFileSync(path.join(dir, 'assets', file));
      const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
      this.assets.set(file, { body, type, etag: etagOf(body), ...(type.startsWith('image/svg') || type.startsWith('text/') ? compressed(body) : {}) });
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
      res.setHeader('Content-Type', asset.type);
      res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
      res.setHeader('ETag', asset.etag);
      if (isFresh(req, asset.etag)) {
        res.status(304).end();
        return;
      }
      sendEncoded(req, res, asset);
    };
  }
}
