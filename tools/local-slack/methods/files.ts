// files.getUploadURLExternal + files.completeUploadExternal: Slack's external upload flow (the bytes
// go to the upload URL in between, see server.ts); completing shares the files in a channel or thread.
// files.info describes a file people attached (events may carry only its id).
import { extname } from "node:path";
import { lookup } from "mime-types";
import { validateBlocks } from "../block-kit.ts";
import { ApiFailure, check, invalid } from "../errors.ts";
import type { StoredFile, Workspace } from "../state.ts";
import type { FileShare, SlackArgs } from "../types.ts";
import { clone, isRecord, nonEmpty, str } from "../util.ts";
import type { MethodContext, MethodFamily } from "./registry.ts";

function getUploadUrl(args: SlackArgs, { state, now }: MethodContext): Record<string, unknown> {
  const filename = nonEmpty(args.filename);
  const length = Number(str(args.length));
  if (filename === undefined || !Number.isInteger(length) || length < 0) {
    throw invalid({
      error: "invalid_arguments",
      message: "filename and an integer length are required",
    });
  }
  const id = state.nextFileId();
  const file: StoredFile = {
    id,
    name: filename,
    declaredLength: length,
    bytes: Buffer.alloc(0),
    uploaded: false,
    completed: false,
    shares: [],
    created: Math.floor(now() / 1000),
  };
  const altText = str(args.alt_text);
  if (altText !== undefined) file.alt_text = altText;
  state.files.set(id, file);
  return { upload_url: `${state.baseUrl}upload/v1/${id}`, file_id: id };
}

/** The uploaded files named by `files: [{ id, title }]`; titles are applied. */
function uploadedFiles(state: Workspace, entries: unknown[]): StoredFile[] {
  return entries.map((entry, i) => {
    const id = isRecord(entry) ? str(entry.id) : undefined;
    const file = id === undefined ? undefined : state.files.get(id);
    if (!file?.uploaded) {
      throw new ApiFailure("file_not_found", {
        response_metadata: {
          messages: [
            file
              ? `[ERROR] no bytes were uploaded to the upload_url of ${file.id} [json-pointer:/files/${i}]`
              : `[ERROR] unknown file id ${String(id)} [json-pointer:/files/${i}]`,
          ],
        },
      });
    }
    const title = isRecord(entry) ? str(entry.title) : undefined;
    if (title !== undefined) file.title = title;
    return file;
  });
}

function share(file: StoredFile, target: FileShare): void {
  file.shares.push(target);
  if (file.channel === undefined) {
    file.channel = target.channel;
    if (target.thread_ts !== undefined) file.thread_ts = target.thread_ts;
  }
}

function fileObject(state: Workspace, f: StoredFile, channel: string | undefined): unknown {
  return {
    id: f.id,
    created: f.created,
    name: f.name,
    title: f.title ?? f.name,
    // Slack types an uploaded file by its name: that is what shows an image or a video inline.
    filetype: extname(f.name).slice(1).toLowerCase() || "binary",
    mimetype: lookup(f.name) || "application/octet-stream",
    size: f.bytes.length,
    user: state.botUserId,
    channels: channel === undefined ? [] : [channel],
    url_private: state.filePrivateUrl(f.id, f.name),
    permalink: `${state.teamUrl}files/${state.botUserId}/${f.id}/${encodeURIComponent(f.name)}`,
  };
}

function completeUpload(args: SlackArgs, { state, codes }: MethodContext): Record<string, unknown> {
  const entries = args.files;
  if (!Array.isArray(entries) || entries.length === 0) {
    throw invalid({
      error: "invalid_arguments",
      message: "files must be a non-empty JSON array of {id, title}",
      pointer: "/files",
    });
  }
  const channelArg = args.channel_id ?? args.channels;
  const channel = channelArg === undefined ? undefined : state.channel(channelArg);
  if (channel !== undefined) state.requireMember(channel);
  const threadTs = nonEmpty(args.thread_ts);
  if (args.blocks !== undefined) check(validateBlocks(args.blocks, "/blocks", codes));
  const files = uploadedFiles(state, entries);
  const initialComment = str(args.initial_comment);
  for (const file of files) file.completed = true;
  if (channel !== undefined) {
    const message = state.storeBotMessage(channel, initialComment ?? "");
    message.files = files.map((f) => f.id);
    if (threadTs !== undefined) message.thread_ts = threadTs;
    if (Array.isArray(args.blocks)) message.blocks = clone(args.blocks);
    for (const file of files) {
      const target: FileShare = { channel, message_ts: message.ts };
      if (threadTs !== undefined) target.thread_ts = threadTs;
      if (initialComment !== undefined) target.initial_comment = initialComment;
      share(file, target);
    }
  }
  return { files: files.map((f) => fileObject(state, f, channel)) };
}

/** files.info for a file a person attached (`LocalSlack.addUserFile`). */
function fileInfo(args: SlackArgs, { state }: MethodContext): Record<string, unknown> {
  const id = nonEmpty(args.file);
  if (id === undefined) throw new ApiFailure("invalid_arguments");
  const file = state.userFiles.get(id);
  if (!file) throw new ApiFailure("file_not_found");
  const url = state.filePrivateUrl(file.id, file.name);
  return {
    file: {
      id: file.id,
      name: file.name,
      title: file.name,
      mimetype: file.mimetype,
      size: file.bytes.length,
      mode: "hosted",
      url_private: url,
      url_private_download: `${url}?download=1`,
    },
  };
}

export const filesMethods: MethodFamily = {
  "files.info": { scopes: ["files:read"], handle: fileInfo },
  "files.getUploadURLExternal": { scopes: ["files:write"], handle: getUploadUrl },
  "files.completeUploadExternal": { scopes: ["files:write"], handle: completeUpload },
};
