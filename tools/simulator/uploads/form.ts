/**
 * Reads the form body of Create Task / Continue Conversation: multipart (multipart.ts) or
 * urlencoded; limit violations become validation issues.
 *
 * The body is always read to its end, so the client gets the answer on the same connection.
 */
import type { IncomingMessage } from "node:http";
import { multipartParser, readMultipart } from "./multipart.ts";
import {
  BadBodyError,
  ClientGoneError,
  emptyForm,
  type FormBody,
  MAX_FIELD_BYTES,
  type UploadLimits,
} from "./uploads.ts";

export async function readForm(req: IncomingMessage, limits: UploadLimits): Promise<FormBody> {
  const contentType = req.headers["content-type"];
  const parser = multipartParser(contentType);
  if (parser !== undefined) return readMultipart(req, parser, limits);
  const body = emptyForm();
  if (contentType?.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    let size = 0;
    const chunks: Buffer[] = [];
    await consume(req, (chunk) => {
      size += chunk.length;
      if (size > MAX_FIELD_BYTES * 2) throw new BadBodyError("Form body too large");
      chunks.push(chunk);
    });
    for (const [k, v] of new URLSearchParams(Buffer.concat(chunks).toString("utf8"))) {
      body.fields.set(k, v);
    }
    return body;
  }
  req.resume();
  body.issues.push({
    loc: ["body"],
    msg: "Expected a multipart/form-data (or application/x-www-form-urlencoded) body",
    type: "model_attributes_type",
  });
  return body;
}

/**
 * Feeds the request body to `onChunk` and resolves at its end. The first error thrown by
 * `onChunk` stops the feeding, but the body is still read to its end (so an answer can be
 * sent on the same connection); then the promise rejects with that error.
 */
function consume(req: IncomingMessage, onChunk: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let failure: unknown;
    let ended = false;
    req.on("data", (chunk: Buffer) => {
      if (failure !== undefined) return;
      try {
        onChunk(chunk);
      } catch (error) {
        failure = error;
      }
    });
    req.on("end", () => {
      ended = true;
      if (failure === undefined) resolve();
      else reject(failure);
    });
    req.on("error", () => {});
    req.on("close", () => {
      if (!ended) reject(new ClientGoneError("client went away during the upload"));
    });
  });
}
