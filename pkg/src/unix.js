// The unix-socket transport of a remote connection (Node only; docs/remote.md): node:http
// with `socketPath`, kept-alive connections, and the same bounds and failure texts as the
// fetch transport (src/remote.js).

import http from 'node:http';
import { LIMITS, failures } from './remote.js';

/** `send(request)` → `{status, etag, body}` over the socket at `socketPath`. */
export function unixTransport(socketPath, token, limits = LIMITS) {
  const fail = failures(socketPath);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const send = (req) =>
    new Promise((resolve, reject) => {
      const headers = { host: 'langonrock' };
      for (const [k, v] of req.headers) headers[k] = v;
      if (token) headers.authorization = `Bearer ${token}`;
      if (req.method !== 'GET') headers['content-length'] = String(req.body.length);
      let settled = false;
      let timer = null;
      const done = (f, v) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        f(v);
      };
      const out = http.request({ socketPath, agent, method: req.method, path: req.path, headers });
      const arm = (ms, error) => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          done(reject, error(ms));
          out.destroy();
        }, ms);
      };
      arm(limits.answerMs, fail.late);
      out.on('error', (e) => {
        if (e.code === 'ENOENT' || e.code === 'ECONNREFUSED' || e.code === 'EACCES') {
          done(reject, fail.unreachable(e.message));
        } else if (e.code === 'HPE_INVALID_CONSTANT' || String(e.code).startsWith('HPE_')) {
          done(reject, fail.broken(`sent an answer that is not HTTP (${e.message})`, req.read));
        } else {
          done(reject, fail.broken(`broke the connection (${e.message})`, req.read));
        }
      });
      out.on('response', (res) => {
        const chunks = [];
        let n = 0;
        arm(limits.stallMs, fail.stalled);
        res.on('data', (c) => {
          n += c.length;
          if (n > limits.maxBody) {
            done(reject, fail.tooBig(limits.maxBody));
            res.destroy();
            return;
          }
          chunks.push(c);
          arm(limits.stallMs, fail.stalled);
        });
        res.on('aborted', () => done(reject, fail.broken('broke off mid-answer (aborted)', req.read)));
        res.on('error', (e) => done(reject, fail.broken(`broke off mid-answer (${e.message})`, req.read)));
        res.on('end', () => {
          if (!res.complete) {
            done(reject, fail.broken('broke off mid-answer (end of file before message length reached)', req.read));
            return;
          }
          const etag = res.headers.etag;
          done(resolve, { status: res.statusCode, etag: typeof etag === 'string' ? etag : undefined, body: new Uint8Array(Buffer.concat(chunks)) });
        });
      });
      out.end(req.body.length ? Buffer.from(req.body) : undefined);
    });
  send.close = async () => agent.destroy();
  return send;
}
